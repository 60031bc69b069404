"""`lexkb snapshots ... --index s3://...`: the same actions on an object-store root."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from lexkb.cli.output import print_listing, print_pruned
from lexkb.core.store import index_root
from lexkb.core.store.object_store import ObjectRoot


def cmd_remote_snapshots(args: argparse.Namespace) -> int:
    remote = ObjectRoot(args.index)
    if args.action == "list":
        found = remote.list_snapshots()
        if args.json:
            print(json.dumps([asdict(s) for s in found]))
            return 0
        print_listing(found, remote.url)
        return 0
    if args.action == "rollback":
        if len(args.versions) != 1:
            raise ValueError("rollback takes one VERSION (a version, a prefix, or previous)")
        version = remote.rollback(args.versions[0])
        if args.json:
            print(json.dumps({"current": version, "verified": True}))
        else:
            print(f"CURRENT now names {version} (every file fetched and verified)")
        return 0
    if args.action == "prune":
        deleted, kept = remote.prune(keep=args.keep, lease_minutes=index_root.LEASE_MINUTES)
        if args.json:
            print(json.dumps({"deleted": deleted, "kept": kept}))
            return 0
        print_pruned(deleted, kept)
        return 0
    if args.action == "verify":
        if len(args.versions) > 1:
            raise ValueError("verify takes at most one VERSION (default: CURRENT)")
        version = remote.resolve_version(args.versions[0] if args.versions else "CURRENT")
        files = remote.verify(version)
        if args.json:
            print(json.dumps({"version": version, "files": files, "ok": True}))
        else:
            print(f"{version}: {files} files, as stored under {remote.url}, match their SHA-256")
        return 0
    raise ValueError(f"{args.action} is not available on an object-store root")
