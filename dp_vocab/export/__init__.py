"""Exporters write a Release in the formats NLP tools load."""
