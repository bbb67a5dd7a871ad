"""LLM judges over any OpenAI-compatible endpoint: prompt templates, output parsers and the HTTP client."""
