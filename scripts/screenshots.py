"""Screenshots of every page for the README: `python -m scripts.screenshots [--spanish]`.

Starts the app like the browser test does, opens every page of the sidebar in headless Chromium
(1400 x 1000 viewport) and saves `docs/screenshots/<page>.jpg`, e.g. `01_similarity.jpg` for
lessons/01_similarity.py (the page file's name, so the README's links stay stable when titles change);
with --spanish also `<page>.es.jpg`. Full pages are cut at --max-height pixels and saved as JPEG to
keep the repository small.
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make `scripts` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.browser import (ROOT, launch_chromium, nav_pages, page_errors, page_slug, running_app, wait_for_app,
                             with_query)

OUT = ROOT / "docs" / "screenshots"
VIEWPORT = {"width": 1400, "height": 1000}


def page_files() -> dict[str, str]:
    """URL path -> page file stem, read from ui/lessons.py's PAGES (section, file, title key, icon, url path)."""
    tree = ast.parse((ROOT / "ui" / "lessons.py").read_text(encoding="utf-8"))
    pages = next(ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PAGES")
    return {url: Path(path).stem for _section, path, _title, _icon, url in pages}


def file_name(href: str, title: str, index: int, files: dict[str, str]) -> str:
    slug = page_slug(href)
    if slug in files:
        return files[slug]
    if index == 0 and files:  # the default page is served at "/"
        return next(iter(files.values()))
    return f"{index:02d}_" + "".join(c if c.isalnum() else "_" for c in title.lower()).strip("_")


def capture(page, path: Path, max_height: int, quality: int) -> None:
    height = min(page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"),
                 max_height)
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], height)})
    wait_for_app(page)
    page.screenshot(path=str(path), type="jpeg", quality=quality,
                    clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": max(VIEWPORT["height"], height)})
    page.set_viewport_size(VIEWPORT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spanish", action="store_true", help="also save <page>.es.jpg with ?lang=es")
    parser.add_argument("--max-height", type=int, default=2000, help="cut full pages at this height (pixels)")
    parser.add_argument("--quality", type=int, default=70, help="JPEG quality")
    parser.add_argument("--only", help="save only the page whose file name contains this")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    files, failed = page_files(), []
    with running_app() as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport=VIEWPORT, locale="en-US")
        page.goto(app.url, wait_until="domcontentloaded")
        wait_for_app(page)
        for index, (title, href) in enumerate(nav_pages(page)):
            name = file_name(href, title, index, files)
            if args.only and args.only not in name:
                continue
            for suffix, url in [("", href)] + ([(".es", with_query(href, "lang=es"))] if args.spanish else []):
                page.goto(url, wait_until="domcontentloaded")
                wait_for_app(page)
                path = OUT / f"{name}{suffix}.jpg"
                capture(page, path, args.max_height, args.quality)
                problems = page_errors(page)
                failed += [f"{path.name}: {problem}" for problem in problems]
                print(f"{path.relative_to(ROOT)}  {path.stat().st_size // 1024} KB  {title}"
                      + ("  (ERRORS ON PAGE)" if problems else ""))
        browser.close()
    for problem in failed:
        print(problem, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
