"""multicrop.judges"""
