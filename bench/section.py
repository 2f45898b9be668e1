"""A side study's section for docs/benchmarks.md: OUT/section.md, the lines its script wrote, then
OUT/notes.md when that file's first line is `<!-- run: DATE -->` with this run's DATE (notes written for an
older run are left out rather than shown beside numbers they do not describe)."""
import os


def write(out, date, lines):
    lines = list(lines)
    notes = os.path.join(out, "notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            first, _, rest = f.read().partition("\n")
        if first.strip() == f"<!-- run: {date} -->":
            lines += [rest.strip("\n"), ""]
    with open(os.path.join(out, "section.md"), "w") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")
