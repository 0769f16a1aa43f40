"""Generated sections of README.md and docs/*.md: the text between two markers.

A section named ``x`` sits between ``<!-- x:begin -->`` and ``<!-- x:end -->`` in one of
the pages; the generators (``tools/bench_readme.py``, ``tools/param_table.py``,
``bench/load.py``) write it wherever its markers are, so a section moves with its markers.
Links in a body are written relative to the repository root (``bench/results/x.md``);
``write`` rewrites them relative to the page that holds the section.
"""
import os
import pathlib
import re
from typing import List

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#:\s]+)\)")


def pages() -> List[pathlib.Path]:
    """Return README.md and every docs/*.md, the pages that may hold sections."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def markers(name: str) -> tuple:
    """Return the begin and end markers of section ``name``."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def page_of(name: str) -> pathlib.Path:
    """Return the page holding section ``name``; KeyError naming the pages when none does."""
    begin = markers(name)[0]
    for page in pages():
        if begin in page.read_text():
            return page
    raise KeyError(f"no page holds <!-- {name}:begin -->; pages: "
                   f"{', '.join(str(p.relative_to(ROOT)) for p in pages())}")


def section(name: str) -> str:
    """Return the text between the markers of section ``name`` (with its newlines)."""
    begin, end = markers(name)
    return page_of(name).read_text().split(begin, 1)[1].split(end, 1)[0]


def relative(body: str, page: pathlib.Path) -> str:
    """Rewrite the root-relative links of ``body`` relative to ``page``'s folder."""
    def fix(match: re.Match) -> str:
        target = os.path.relpath(ROOT / match.group(1), page.parent)
        return f"]({pathlib.Path(target).as_posix()})"
    return LINK.sub(fix, body)


def replace(text: str, name: str, body: str) -> str:
    """Return ``text`` with ``body`` between the markers of ``name`` (unchanged if absent)."""
    begin, end = markers(name)
    if begin not in text:
        return text
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return f"{head}{begin}\n{body}\n{end}{tail}"


def write(name: str, body: str) -> pathlib.Path:
    """Put ``body`` into section ``name`` of the page that holds it; return that page."""
    page = page_of(name)
    page.write_text(replace(page.read_text(), name, relative(body, page)))
    return page
