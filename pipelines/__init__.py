import warnings

# The single-run backfill policy the build relies on is marked beta; the warning is noise for users.
warnings.filterwarnings("ignore", message=r".*backfill_policy.*beta.*")
