"""multicrop.metrics"""
