"""multicrop.stats"""
