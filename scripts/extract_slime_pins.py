#!/usr/bin/env python3
"""Which SGLang every slime commit and release ran: the image its ``docker/Dockerfile`` builds FROM.

Reads a clone of github.com/THUDM/slime (a bare clone works): for every commit reachable from
``--ref`` (default HEAD) and every tag, the Dockerfile at that commit; its ``ARG`` defaults are
substituted into the ``FROM`` line (``slimerl/sglang:${SGLANG_IMAGE_TAG}``). The image names the
SGLang release: a release tag (``v0.5.15.post1-cu129``) names it; a nightly
(``nightly-dev-20260107-dce8b060``) is checked as the last release published on or before its date
(``../shared/design/sglang-releases.yaml``); ``latest`` names none.

Writes ``specguard/data/slime-sglang-pins.json``: the images with the release each means and why,
the tags, and each commit's first 9 hex digits with the index of its image. ``--check``
regenerates and compares instead of writing.

    python scripts/extract_slime_pins.py /path/to/slime            # write the data
    python scripts/extract_slime_pins.py /path/to/slime --check
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "specguard" / "data" / "slime-sglang-pins.json"
RELEASES = ROOT.parent / "shared" / "design" / "sglang-releases.yaml"
DOCKERFILE = "docker/Dockerfile"
PREFIX = 9

sys.path.insert(0, str(ROOT))
from specguard.versions import version_from_image  # the same tag reading as `check`

_NIGHTLY = re.compile(r":nightly-dev-(\d{4})(\d{2})(\d{2})-")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def image_of(dockerfile: str) -> str | None:
    """The first FROM image with the file's ARG defaults substituted (``${NAME}`` and ``$NAME``)."""
    args: dict[str, str] = {}
    for line in dockerfile.splitlines():
        line = line.strip()
        if match := re.match(r"ARG\s+(\w+)=(\S+)", line):
            args.setdefault(match.group(1), match.group(2).strip("\"'"))
        elif line.upper().startswith("FROM "):
            image = line.split()[1]
            return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), m.group(0)), image)
    return None


def release_for(image: str, releases: list[tuple[str, date | None]]) -> tuple[str | None, str]:
    """The SGLang release an image runs, and how that follows from the image."""
    if (version := version_from_image(image)) is not None:
        return version, "image tag"
    if match := _NIGHTLY.search(image):
        built = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        published = [(v, d) for v, d in releases if d is not None and d <= built]
        if published:
            version, when = published[-1]
            return version, f"nightly of {built.isoformat()}; {version} ({when.isoformat()}) is the last release before it"
    return None, "the image names no release"


def extract(repo: Path, ref: str) -> dict:
    rows = yaml.safe_load(RELEASES.read_text())["releases"]
    # A release dated only to the month cannot order a nightly against it: left undated.
    releases = [(str(r["version"]), date.fromisoformat(r["date"]) if r["date"] and len(str(r["date"])) == 10 else None) for r in rows]
    images: list[str] = []
    index: dict[str, int] = {}

    def image_index(commit: str) -> int | None:
        try:
            text = git(repo, "show", f"{commit}:{DOCKERFILE}")
        except subprocess.CalledProcessError:
            return None  # no Dockerfile yet
        image = image_of(text)
        if image is None:
            return None
        if image not in index:
            index[image] = len(images)
            images.append(image)
        return index[image]

    commits: dict[str, int] = {}
    for commit in git(repo, "rev-list", ref).split():
        found = image_index(commit)
        if found is not None:
            commits[commit[:PREFIX]] = found
    tags: dict[str, str] = {}
    for line in git(repo, "tag", "--format=%(refname:short) %(objectname) %(*objectname)").splitlines():
        name, obj, peeled = (line.split() + [""])[:3]
        commit = (peeled or obj)[:PREFIX]
        if commit not in commits and (found := image_index(commit)) is not None:
            commits[commit] = found
        tags[name.removeprefix("v")] = commit
    head = git(repo, "log", "-1", "--format=%h %cs", ref).strip()
    pins = []
    for image in images:
        sglang, why = release_for(image, releases)
        pins.append({"image": image, "sglang": sglang, "why": why})
    return {
        "source": f"github.com/THUDM/slime {DOCKERFILE} at every commit reachable from {head}, and every tag",
        "pins": pins,
        "tags": dict(sorted(tags.items())),
        "commits": dict(sorted(commits.items())),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="a clone of github.com/THUDM/slime")
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--check", action="store_true", help="compare with the shipped data instead of writing")
    options = parser.parse_args()
    data = extract(options.repo, options.ref)
    text = json.dumps(data, indent=0, sort_keys=False) + "\n"
    if options.check:
        same = OUT.read_text() == text
        print("slime pins: " + ("identical" if same else "DIFFER from the shipped data"))
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(data['pins'])} images, {len(data['tags'])} tags, {len(data['commits'])} commits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
