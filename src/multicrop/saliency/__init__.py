"""multicrop.saliency"""
