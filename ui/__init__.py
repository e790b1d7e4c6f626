"""Presentation shared by the lessons: i18n lookup, shared settings, altair charts, reusable widgets.

`ui` may import `core`; `core` never imports `ui`, and `ui` never imports `pages`.
"""
