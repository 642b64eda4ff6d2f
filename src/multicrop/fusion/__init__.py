"""multicrop.fusion"""
