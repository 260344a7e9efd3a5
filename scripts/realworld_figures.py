"""Print the real-world corpus figures (catch rate, warnings on good launches, false alarms, per domain; and how often
`specguard explain` names a case's rule from the error text its source quotes), or write them into README.md between the
markers (``--write``). The tests hold README's block equal to this output.

    python scripts/realworld_figures.py            # print the table and every miss
    python scripts/realworld_figures.py --write    # refresh README.md
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "realworld"))

BEGIN = "<!-- realworld-figures:begin (scripts/realworld_figures.py --write) -->"
END = "<!-- realworld-figures:end -->"


def block(results: Iterable) -> str:
    """The README block: the catch figures, then the `specguard explain` figures over the failure
    cases whose source quotes an error (issue #24; "unavailable" where this specguard has no
    explain command, never 0%)."""
    from corpus import explain_results, explain_table, figures_table, load_cases

    return f"{BEGIN}\n{figures_table(results)}\n\n{explain_table(explain_results(), load_cases())}\n{END}"


def current_block(readme: str) -> str | None:
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < 0:
        return None
    return readme[start : end + len(END)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="refresh the block in README.md")
    args = parser.parse_args()
    from corpus import all_results

    results = all_results()
    new = block(results.values())
    print(new)
    for result in results.values():
        if result.case.is_failure and not result.caught:
            print(f"\nmissed {result.case.id}{' (xfail: ' + result.case.xfail + ')' if result.case.xfail else ''}: {result.describe()}")
        if result.false_alarm:
            print(f"\nfalse alarm {result.case.id}: {result.describe()}")
        elif result.warned:
            print(f"\nwarning on good {result.case.id}{' (xfail: ' + result.case.xfail + ')' if result.case.xfail else ''}: {result.describe()}")
    from corpus import explain_results

    explained = explain_results()
    for item in () if isinstance(explained, str) else explained:
        rules = list(item.case.expect.rules)
        if not item.in_first_three:
            print(f"\nexplain misses {item.case.id} (log alone; wants {rules}): causes {list(item.alone[:3])}")
        if not item.first_with_launch:
            print(f"\nexplain misses {item.case.id} (launch echoed {item.echo_by}; wants {rules} first): causes {list(item.with_launch[:3])}")
    if args.write:
        readme_path = REPO / "README.md"
        readme = readme_path.read_text()
        old = current_block(readme)
        if old is None:
            raise SystemExit("README.md has no real-world figures markers")
        readme_path.write_text(readme.replace(old, new))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
