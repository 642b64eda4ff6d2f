"""multicrop.store"""
