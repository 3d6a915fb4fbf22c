"""Canonical playbook sections, their id slugs, and name resolution.

A playbook has a fixed, ordered set of sections. Every entry id is `{slug}-NNN` where the slug belongs
to the entry's section. Section names given by a model resolve case-insensitively after stripping;
anything else falls back to the set's fallback section (OTHERS by default), so operations never
create new section names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.errors import SectionsError
from core.models import SLUG_PATTERN
from core.patterns import Pattern

__all__ = ["DEFAULT_SECTIONS", "Section", "SectionSet", "load_sections_yaml"]

_SLUG_RE = Pattern(SLUG_PATTERN)
# What a section's name may hold: it is printed as a `## NAME` heading in CLAUDE.md and the hooks' digest, so only
# words (letters, marks, digits), spaces and punctuation that means nothing to Markdown or HTML, on one line, within
# 80 characters. No line break, `<`, `#`, `*`, `_`, `[`, backquote or invisible character: a name cannot end the
# marked block, start a heading of its own or hide text.
_NAME_RE = Pattern(r"[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}\p{Pd} &,.;:'\"()/+!?]{0,78}[\p{L}\p{M}\p{N}.)!?])?")


class Section(BaseModel):
    """One section: its display name, the slug used in entry ids, and a description for prompts."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    slug: str = Field(min_length=1)
    description: str = ""


class SectionSet(BaseModel):
    """An ordered, validated set of sections with one fallback section."""

    model_config = ConfigDict(frozen=True)

    sections: tuple[Section, ...]
    fallback: str = "OTHERS"

    def model_post_init(self, __context: Any) -> None:
        """Reject duplicate names or slugs and a missing fallback, naming the problem."""
        if not self.sections:
            raise SectionsError("The section set is empty; declare at least the fallback section.")
        seen_names: dict[str, str] = {}
        seen_slugs: set[str] = set()
        for section in self.sections:
            name = section.name.strip()
            if name != section.name or not name:
                raise SectionsError(f"Section name `{section.name}` has surrounding spaces; write it without them.")
            if not _NAME_RE.fullmatch(name):
                raise SectionsError(
                    f"Section name {name[:80]!r} is not a plain title; use up to 80 letters, digits, spaces and"
                    " `&,.;:'\"()/+!?-`."
                )
            key = name.casefold()
            if key in seen_names:
                raise SectionsError(
                    f"Section name `{name}` is declared twice (names compare case-insensitively); keep one of them."
                )
            if not _SLUG_RE.fullmatch(section.slug):
                raise SectionsError(
                    f"Slug `{section.slug}` of section `{name}` is not a lowercase identifier;"
                    " use letters, digits and underscores."
                )
            if section.slug in seen_slugs:
                raise SectionsError(f"Slug `{section.slug}` is used by two sections; give each section its own slug.")
            seen_names[key] = name
            seen_slugs.add(section.slug)
        if self.fallback.casefold() not in seen_names:
            raise SectionsError(
                f"Fallback section `{self.fallback}` is not declared; add it or set `fallback:`"
                " to one of the declared sections."
            )

    @property
    def names(self) -> list[str]:
        """Section names in canonical order."""
        return [s.name for s in self.sections]

    @property
    def slugs(self) -> dict[str, str]:
        """Canonical name -> slug, in canonical order."""
        return {s.name: s.slug for s in self.sections}

    @property
    def fallback_name(self) -> str:
        """The canonical spelling of the fallback section."""
        found = self.lookup(self.fallback)
        assert found is not None  # guaranteed by model_post_init
        return found

    def lookup(self, raw: object) -> str | None:
        """Return the canonical name `raw` designates, or None when it designates none."""
        if not isinstance(raw, str):
            return None
        key = raw.strip().casefold()
        if not key:
            return None
        for section in self.sections:
            if section.name.casefold() == key:
                return section.name
        return None

    def resolve(self, raw: object) -> str:
        """Return the canonical name for `raw`, falling back when missing, empty or unknown."""
        return self.lookup(raw) or self.fallback_name

    def slug_of(self, name: str) -> str:
        """Slug of a canonical section name."""
        return self.slugs[name]


DEFAULT_SECTIONS = SectionSet(
    sections=(
        Section(
            name="PATTERNS & APPROACHES",
            slug="pat",
            description="Approaches that worked and should be repeated.",
        ),
        Section(
            name="MISTAKES TO AVOID",
            slug="mis",
            description="Errors made in past sessions and how to avoid them.",
        ),
        Section(
            name="USER PREFERENCES",
            slug="pref",
            description="Conventions and preferences the user stated or corrected.",
        ),
        Section(
            name="PROJECT CONTEXT",
            slug="ctx",
            description="Facts about the project the agent kept rediscovering.",
        ),
        Section(name="OTHERS", slug="oth", description="Anything that fits no other section."),
    ),
    fallback="OTHERS",
)


def load_sections_yaml(path: Path) -> SectionSet:
    """Read a `sections.yaml` file.

    The file holds `sections: [{name, slug, description}]` and optionally `fallback: NAME`.

    Args:
        path: the YAML file.

    Returns:
        The validated section set.

    Raises:
        SectionsError: the file is unreadable, not YAML, or breaks a section rule.
    """
    import yaml  # only a sections file is YAML: every command loads this module, few read one

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SectionsError(f"Cannot read sections file `{path}`: {exc.strerror}.") from exc
    except yaml.YAMLError as exc:
        raise SectionsError(f"Sections file `{path}` is not valid YAML; fix its syntax.") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("sections"), list):
        raise SectionsError(f"Sections file `{path}` must hold a `sections:` list of {{name, slug, description}}.")
    try:
        return SectionSet(
            sections=tuple(Section.model_validate(item) for item in raw["sections"]),
            fallback=str(raw.get("fallback", "OTHERS")),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SectionsError(f"Sections file `{path}` has an invalid section ({where}: {first['msg']}).") from exc
    except SectionsError as exc:
        raise SectionsError(f"Sections file `{path}`: {exc}") from exc
