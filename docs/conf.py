"""Sphinx configuration of make docs: these markdown pages (MyST) and the API reference.

Built by ``tools/docs.sh`` with warnings as errors (``sphinx -W -c docs .``) from the
repository root, so that README.md and the benchmark results the pages link to are pages
too; requirements in ``docs/requirements.txt``.  The API reference (``api.md``) is
autodoc on the installed packages (Google-style ``Args:`` sections through napoleon):
nothing is mocked.
"""
project = "ros2_ik"
author = "ros2_ik developers"
copyright = "ros2_ik developers, Apache-2.0"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon",
              "sphinx.ext.viewcode"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "docs/index"
include_patterns = ["README.md", "docs/*.md", "bench/README.md", "bench/results/*.md",
                    "bench/results/*/*.md"]
exclude_patterns = ["docs/_build", ".venv", "build", "install", "log"]
html_extra_path = ["_root"]         # index.html: a redirect to docs/index.html

myst_heading_anchors = 3            # links to sections: page.md#a-heading
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "description"

html_theme = "alabaster"
html_title = "ros2_ik"


def _title_results(app, docname: str, source: list) -> None:
    """Give the generated tables of bench/results/ (no heading of their own) a title."""
    if docname.startswith("bench/results/") and not source[0].lstrip().startswith("#"):
        source[0] = f"# Benchmark results: {docname[len('bench/results/'):]}\n\n{source[0]}"


def setup(app) -> None:
    """Register the hook that titles the benchmark result pages."""
    app.connect("source-read", _title_results)
