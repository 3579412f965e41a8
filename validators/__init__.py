"""Intake sheet specifications, type coercion and pandera validation."""
