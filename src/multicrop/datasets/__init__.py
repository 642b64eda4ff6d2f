"""multicrop.datasets"""
