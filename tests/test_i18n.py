"""The catalogs: same keys in both languages, no empty strings, matching placeholders, every key used exists."""
from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest

from ui import i18n, state

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py")), *sorted((ROOT / "lessons").glob("*.py"))]
KEY_SHAPE = r"^[a-z_]+(\.[A-Za-z0-9_]+)+$"


def flatten(node: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in node.items():
        out.update(flatten(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


CATALOGS = {lang: flatten(json.loads(json.dumps(i18n.catalog(lang), default=dict))) for lang in i18n.LANGUAGES}


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_both_catalogs_have_the_same_keys():
    en, es = set(CATALOGS["en"]), set(CATALOGS["es"])
    assert en == es, {"only in en": sorted(en - es), "only in es": sorted(es - en)}
    assert len(en) > 50


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_no_empty_or_non_string_values(lang):
    bad = [k for k, v in CATALOGS[lang].items() if not isinstance(v, str) or not v.strip()]
    assert not bad


def test_placeholders_match_between_languages():
    mismatched = {k: (placeholders(v), placeholders(CATALOGS["es"][k])) for k, v in CATALOGS["en"].items()
                  if placeholders(v) != placeholders(CATALOGS["es"][k])}
    assert not mismatched


def literal_keys() -> dict[str, set[str]]:
    """Per source file: first arguments of t(...) calls, and string constants shaped like a catalog key whose
    first part is a catalog section (such as the title keys in app.PAGES)."""
    sections = {k.split(".")[0] for k in CATALOGS["en"]}
    found: dict[str, set[str]] = {}
    for path in SOURCES:
        keys = found.setdefault(path.name, set())
        tree = ast.parse(path.read_text("utf-8"))
        pieces = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
        for node in ast.walk(tree):
            if id(node) in pieces:  # a piece of an f-string key ("pe.part_" of f"pe.part_{p}"): the pages' own
                continue  # tests draw every part and exercise, and t() raises on a missing key under pytest
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                keys.add(node.args[0].value)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and re.match(KEY_SHAPE, node.value) and node.value.split(".")[0] in sections):
                keys.add(node.value)
    return found


def test_every_key_used_in_the_code_exists():
    found = literal_keys()
    assert len(found["01_similarity.py"]) > 30 and len(found["app.py"] | found["lessons.py"]) >= 3
    missing = {name: sorted(k for k in keys if k not in CATALOGS["en"]) for name, keys in found.items()}
    assert not any(missing.values()), missing


def test_keys_built_at_run_time_exist():
    tree = ast.parse((ROOT / "ui" / "lessons.py").read_text("utf-8"))
    sections = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                    if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "SECTIONS")
    dynamic = [f"nav.{s}" for s in sections] + [f"lang.{c}" for c in i18n.LANGUAGES]
    dynamic += [f"mask.{m}" for m in state.MASKS]
    assert [k for k in dynamic if k not in CATALOGS["en"]] == []


def test_every_lesson_has_its_prose_in_both_languages():
    files = {lang: i18n.prose_files(lang) for lang in i18n.LANGUAGES}
    assert files["en"].keys() == files["es"].keys() and len(files["en"]) >= 14
    for namespace, path in files["en"].items():  # the same sections, in the same order, in both languages
        assert list(i18n.sections(path.read_text("utf-8"))) == list(
            i18n.sections(files["es"][namespace].read_text("utf-8"))), path.name
    on_disk = {p.name for p in i18n.PROSE_DIR.glob("*.md")}
    assert on_disk == {p.name for lang in files.values() for p in lang.values()}  # no file outside ui/lessons.py


def test_prose_files_read_braces_as_text_and_double_braces_as_fields():
    text = "<!-- note to editors -->\n<!-- a -->\n$\\sqrt{d_{model}} = \\sqrt{{{d}}} \\approx {{root:.2f}}$\n\n<!-- b.c -->\nx\n"
    found = i18n.sections(text)
    assert list(found) == ["a", "b.c"]
    assert found["a"].format(d=64, root=8) == "$\\sqrt{d_{model}} = \\sqrt{64} \\approx 8.00$"
    with pytest.raises(ValueError, match="twice"):
        i18n.sections("<!-- a -->\nx\n<!-- a -->\ny")


def test_lookup_and_errors():
    assert i18n.t("nav.attention", lang="es") == "Atención"
    assert i18n.t("panel.shape", lang="en", rows=5, cols=3) == "(5 × 3)"
    with pytest.raises(KeyError):
        i18n.t("nav.no_such_key", lang="en")
    with pytest.raises(KeyError):
        i18n.t("nav", lang="en")  # a section is not a string
    with pytest.raises(KeyError):
        i18n.t("nav.attention", lang="fr")
    with pytest.raises(TypeError):
        i18n.catalog("en")["nav"]["attention"] = "changed"  # shared by every session: read-only


def test_spanish_is_spanish():
    es = CATALOGS["es"]
    assert es["nav.attention"] == "Atención" and es["nav.blocks"] == "Bloques de construcción"
    assert es["nav.model"] == "El modelo completo" and es["nav.practice"] == "Práctica"
    assert es["sidebar.show_numbers"] == "Mostrar los números"
    wordy = {k for k, v in CATALOGS["en"].items() if len(re.findall(r"[A-Za-z]{3,}", re.sub(r"{[^}]*}", "", v))) > 1}
    same = [k for k in sorted(wordy) if CATALOGS["en"][k] == es[k]]
    assert same == [], same  # sentences left untranslated (names such as "English" are fine)


def test_numbers_follow_the_language():
    assert i18n._Formatter("es").format("{a:.3f} {b} {c:,} {d:.1%}", a=0.12345, b=2019, c=1234567, d=0.256) == \
        "0,123 2019 1.234.567 25,6\u00a0%"  # Spanish: a (no-break) space before the percent sign
    assert [i18n.number(v, ",", "es") for v in (999, 2048, -2048, 20480)] == ["999", "2048", "-2048", "20.480"]
    assert i18n._Formatter("en").format("{a:.3f} {c:,}", a=0.12345, c=1234567) == "0.123 1,234,567"
    assert i18n._Formatter("es").format("{x:.1f} and $\\\\sqrt{{2}} \\\\approx {x:.1f}$", x=1.4) == \
        "1,4 and $\\\\sqrt{2} \\\\approx 1{,}4$"  # inside LaTeX a decimal comma is {,}, set without a space
    assert i18n.number(12345.5, ",.1f", "es") == "12.345,5" and i18n.number(True, "", "es") == "True"


def test_powers_of_ten_read_the_same_in_every_language():
    """The learning rates' labels (lessons 9, 12 and 14): no decimal mark, so a language switch leaves them."""
    found = {v: i18n.power_of_ten(v) for v in (1e-4, 2e-4, 3e-4, 5e-4, 1e-3, 1e-2, 3e-2, 1.0, 20.0)}
    assert found == {1e-4: "10⁻⁴", 2e-4: "2×10⁻⁴", 3e-4: "3×10⁻⁴", 5e-4: "5×10⁻⁴", 1e-3: "10⁻³", 1e-2: "10⁻²",
                     3e-2: "3×10⁻²", 1.0: "10⁰", 20.0: "2×10¹"}
    digits = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
    for value, text in found.items():  # read back, the label is the value
        mantissa, _, power = text.rpartition("10")
        assert float(mantissa.rstrip("×") or 1) * 10 ** int(power.translate(digits)) == pytest.approx(value)
