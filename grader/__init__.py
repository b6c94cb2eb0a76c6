"""torchdrill's grading engine: pytest plugin, submission loading, scoring, CLI."""

__version__ = "0.1.0"
