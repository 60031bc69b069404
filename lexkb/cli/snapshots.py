"""`lexkb snapshots list|verify|diff|rollback|prune` on a local index root; an object-store
root goes to lexkb.cli.remote."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lexkb.cli.output import print_listing, print_pruned
from lexkb.core.text.terminal import safe


def cmd_snapshots(args: argparse.Namespace) -> int:
    from lexkb.core.store import index_root
    from lexkb.core.store.diff import diff
    from lexkb.core.store.object_store import is_remote

    if is_remote(args.index):
        from lexkb.cli.remote import cmd_remote_snapshots

        return cmd_remote_snapshots(args)
    root = Path(args.index)
    if args.action == "list":
        found = index_root.list_snapshots(root)
        if args.json:
            print(json.dumps([{**vars(s), "path": str(s.path)} for s in found]))
            return 0
        print_listing(found, str(root))
        return 0
    if args.action == "rollback":
        if len(args.versions) != 1:
            raise ValueError("rollback takes one VERSION (a version, a prefix, or previous)")
        loaded = index_root.rollback(root, args.versions[0])
        if args.json:
            print(json.dumps({"current": loaded.version, "verified": True}))
        else:
            print(f"CURRENT now names {loaded.version} (every file verified)")
        return 0
    if args.action == "prune":
        pruned = index_root.prune(root, keep=args.keep)
        if args.json:
            print(json.dumps({"deleted": pruned.deleted, "kept": pruned.kept}))
            return 0
        print_pruned(pruned.deleted, pruned.kept)
        return 0
    if args.action == "verify":
        if len(args.versions) > 1:
            raise ValueError("verify takes at most one VERSION (default: CURRENT)")
        checked = index_root.verify(root, args.versions[0] if args.versions else "CURRENT")
        if args.json:
            print(
                json.dumps(
                    {
                        "version": checked.version,
                        "files": checked.files,
                        "tables": checked.tables,
                        "ok": True,
                    }
                )
            )
        else:
            rows = sum(checked.tables.values())
            print(
                f"{checked.version}: {checked.files} files match their SHA-256, "
                f"{len(checked.tables)} tables hold the {rows:,} rows the manifest lists"
            )
        return 0
    if len(args.versions) not in (1, 2):
        raise ValueError("diff takes OLD [NEW] (versions, prefixes, previous or CURRENT)")
    old, new = args.versions if len(args.versions) == 2 else ("previous", args.versions[0])
    change = diff(root, old, new)
    if args.json:
        print(json.dumps(change.to_dict()))
        return 0
    print(f"{change.old} -> {change.new}")
    for name, count in change.summary().items():
        print(f"  {name.replace('_', ' ')}: {count}")
        items = getattr(change, name)
        shown = list(items.items()) if isinstance(items, dict) else list(items)
        for item in shown[: args.show]:
            if isinstance(item, tuple):
                fields = "; ".join(f"{k}: {v[0]!r} -> {v[1]!r}" for k, v in item[1].items())
                print(f"      {safe(item[0])}: {safe(fields)}")
            elif hasattr(item, "changes"):
                print(f"      {safe(item.chunk)}: {safe('; '.join(item.changes))}")
            else:
                print(f"      {safe(item)}")
    return 0
