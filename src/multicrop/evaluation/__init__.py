"""multicrop.evaluation"""
