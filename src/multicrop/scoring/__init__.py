"""multicrop.scoring"""
