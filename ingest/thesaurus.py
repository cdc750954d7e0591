"""NLM's MeSH descriptor file (desc20XX.xml, public: https://www.nlm.nih.gov/databases/download/mesh.html) imported
as synonym groups: each descriptor's heading and the entry terms of its preferred concept find each other, as the
registry's search expands a lay term to its heading ("Heart Attack" → "Myocardial Infarction", "Cancer" →
"Neoplasms"). The groups are written to <warehouse>/thesaurus/mesh.csv (the columns of sql/data/synonyms.csv) and
take effect when a state is published (`ctmirror thesaurus import` republishes the current one).

Guards against over-reach, each a choice the tests hold:
- only the preferred concept's terms: a descriptor's other concepts are narrower or related things ("Tumor
  Lysis" under Neoplasms would not be cancer);
- only descriptors whose tree numbers place them where the registry searches: diseases (C, F03) for conditions;
  chemicals and drugs (D) and therapeutic and surgical procedures (E02, E04) for interventions;
- a term of fewer than three letters and digits (normalised), or one shared by two descriptors of the same field
  ("Cold" is a temperature and a disease), teaches nothing.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ctmirror.core.errors import InputError
from ctmirror.core.words import search_norm

THESAURUS_FOLDER = "thesaurus"
MESH_FILE = "mesh.csv"
CONDITION_TREES = ("C", "F03")
INTERVENTION_TREES = ("D", "E02", "E04")
MIN_TERM_CHARACTERS = 3


@dataclass(frozen=True)
class ThesaurusImport:
    descriptors: int  # descriptors read
    groups: int  # descriptors kept (in a searched tree, with a term left)
    phrases: int  # phrases written
    ambiguous: int  # terms dropped for naming two descriptors of one field
    path: Path


def thesaurus_files(warehouse_root: Path) -> list[Path]:
    """The imported thesaurus files of a warehouse, in name order (none before an import)."""
    return sorted((Path(warehouse_root) / THESAURUS_FOLDER).glob("*.csv"))


def thesaurus_digest(files: list[Path]) -> str:
    """What the imported thesaurus is: a publish builds its index whole when this changed."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _field(tree_numbers: list[str]) -> str | None:
    if any(t.startswith(CONDITION_TREES) for t in tree_numbers):
        return "condition"
    if any(t.startswith(INTERVENTION_TREES) for t in tree_numbers):
        return "intervention"
    return None


def read_descriptors(path: Path):
    """(descriptor UI, heading, tree numbers, preferred concept's terms) for each DescriptorRecord, streamed."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as stream:
            for _, element in ElementTree.iterparse(stream, events=("end",)):
                if element.tag != "DescriptorRecord":
                    continue
                ui = element.findtext("DescriptorUI") or ""
                heading = element.findtext("DescriptorName/String") or ""
                trees = [t.text or "" for t in element.iterfind("TreeNumberList/TreeNumber")]
                terms = [t.text or "" for concept in element.iterfind("ConceptList/Concept")
                         if concept.get("PreferredConceptYN") == "Y"
                         for t in concept.iterfind("TermList/Term/String")]
                yield ui, heading, trees, terms
                element.clear()
    except ElementTree.ParseError as exc:
        raise InputError(f"{path} is not a MeSH descriptor file: {exc}",
                         hint="give NLM's descriptor XML (desc20XX.xml or .xml.gz) from "
                              "https://www.nlm.nih.gov/databases/download/mesh.html") from None
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read {path}: {exc}", hint="check the path and the file") from None


def import_mesh(warehouse_root: Path, source: Path) -> ThesaurusImport:
    """Writes the synonym groups of a MeSH descriptor file to <warehouse>/thesaurus/mesh.csv (replacing an earlier
    import whole, written beside and renamed into place)."""
    source = Path(source)
    if not source.is_file():
        raise InputError(f"{source} is not a file", hint="give the path of NLM's desc20XX.xml (or .xml.gz)")
    groups: dict[tuple[str, str], dict[str, str]] = {}  # (field, UI) → normalised phrase → text
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)  # (field, phrase) → descriptor UIs
    descriptors = 0
    for ui, heading, trees, terms in read_descriptors(source):
        descriptors += 1
        field = _field(trees)
        if field is None or not ui:
            continue
        phrases = groups.setdefault((field, ui), {})
        for text in (heading, *terms):
            norm = search_norm(text)
            if len(norm.replace(" ", "")) >= MIN_TERM_CHARACTERS:
                phrases.setdefault(norm, text)
                owners[(field, norm)].add(ui)
    if descriptors == 0:
        raise InputError(f"{source} holds no DescriptorRecord",
                         hint="give NLM's descriptor XML (desc20XX.xml), not the qualifier or supplementary file")
    ambiguous = {key for key, uis in owners.items() if len(uis) > 1}
    rows = []
    for (field, ui), phrases in sorted(groups.items()):
        kept = [text for norm, text in phrases.items() if (field, norm) not in ambiguous]
        if len(kept) > 1:  # a heading alone teaches nothing
            rows.extend((field, f"mesh {ui}", text) for text in kept)
    folder = Path(warehouse_root) / THESAURUS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / MESH_FILE
    temporary = folder / f".{MESH_FILE}.tmp"
    with open(temporary, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")  # the dialect of sql/data/synonyms.csv, read with it
        writer.writerow(("field", "group_name", "phrase"))
        writer.writerows(rows)
    os.replace(temporary, target)
    kept_groups = len({(field, group) for field, group, _ in rows})
    (folder / "mesh.json").write_text(json.dumps({"source": source.name, "descriptors": descriptors,
                                                  "groups": kept_groups, "phrases": len(rows)}, indent=1) + "\n")
    return ThesaurusImport(descriptors=descriptors, groups=kept_groups, phrases=len(rows),
                           ambiguous=len(ambiguous), path=target)
