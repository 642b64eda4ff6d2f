"""multicrop.io"""
