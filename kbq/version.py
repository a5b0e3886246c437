"""The one place the version lives; pyproject reads it from here (hatch dynamic version)."""

__version__ = "0.1.0"
