"""Text to items: normalisation, tokenizers and the n-gram extractor."""
