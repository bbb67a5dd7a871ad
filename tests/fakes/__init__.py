"""Local stand-ins for external services, for tests."""
