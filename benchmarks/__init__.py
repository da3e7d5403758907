"""Standalone performance scripts; each sets up Django itself and uses its own database."""
