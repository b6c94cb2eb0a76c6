"""Sphinx configuration of torchdrill's documentation site (``tox -e docs`` builds it).

The pages are Markdown, read by MyST. The build treats every warning as an error,
so a broken link between pages or to a heading fails ``tox``.
"""

project = "torchdrill"
author = "the torchdrill authors"
copyright = "2026, the torchdrill authors"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# [text](page.md#a-heading) links: GitHub-style anchors for headings down to ###.
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]

html_theme = "furo"
html_title = "torchdrill"
html_show_sourcelink = False
