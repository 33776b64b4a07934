"""A target as the tester knows it before /info: a name and a URL, from a list or `name=url,...`."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TargetRef(BaseModel):
    """All the tester knows of a target before /info: its name, its URL, whether it is measured."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    url: str = Field(pattern=r"^https?://")
    measure: bool = True


def parse_target_list(text: str, measure: bool) -> list[TargetRef]:
    """`name=url,name=url` (the form env vars carry) into target references."""
    targets = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, separator, url = item.partition("=")
        if not separator:
            raise ValueError(f"target {item!r} is not NAME=URL")
        targets.append(TargetRef(name=name.strip(), url=url.strip().rstrip("/"), measure=measure))
    return targets
