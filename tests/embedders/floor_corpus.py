"""A small runbook corpus with on-topic questions and unrelated prompts, to check a model's hook floor.

Each chunk is embedded as ragdown embeds chunks (`breadcrumb + "\\n\\n" + text`). Each on-topic question has
one chunk that answers it; the unrelated prompts are the kind the behaviour spec measured ("weather in
Paris", "a recipe for carbonara", "tell me a joke").
"""

from __future__ import annotations

CHUNKS: tuple[str, ...] = (
    "Backups › Schedule\n\nNightly snapshots of the Postgres cluster are taken at 02:00 UTC by the backup "
    "cron job and kept for 30 days in the cold storage bucket.",
    "Backups › Restore\n\nTo restore, stop the app servers, run pg_restore twice against the new primary "
    "(the first pass creates roles), then start the app servers and check the row counts.",
    "Kafka › Consumer lag\n\nThe consumer lag alert fires when a partition is more than 10,000 messages "
    "behind. Scale the consumer group or look for a poison message stuck at the head of the partition.",
    "On-call › Rotation\n\nThe on-call rotation changes every Monday at 09:00. If the primary does not "
    "acknowledge a page within 15 minutes it escalates to the secondary, then to the platform lead.",
    "TLS › Certificates\n\ncert-manager renews certificates 30 days before they expire. If a renewal fails, "
    "check the ACME challenge with kubectl describe certificaterequest.",
    "Deploys › Rollback\n\nRoll back a bad deploy with the deploy tool's rollback command; it redeploys the "
    "previous image tag and runs no database migrations.",
    "Redis › Memory\n\nWhen Redis memory passes 80% the eviction policy starts dropping least recently used "
    "keys; raise maxmemory or find the keys without a TTL.",
    "Access › SSH\n\nEngineers reach production hosts through the bastion with short-lived SSH certificates "
    "issued by the vault; direct SSH from laptops is blocked.",
    "DNS › Changes\n\nDNS records are managed in the terraform repository; a merged change is applied by CI "
    "within ten minutes and the TTL is 300 seconds.",
    "Logging › Retention\n\nApplication logs are shipped to the log cluster and kept for 14 days; audit logs "
    "are kept for a year in a separate index.",
    "Billing › Invoices\n\nInvoices are generated on the first day of the month by the billing worker; a "
    "failed run can be retried from the admin panel without sending duplicates.",
    "Incidents › Postmortems\n\nEvery severity 1 or 2 incident gets a blameless postmortem within five "
    "working days, with action items tracked in the incident board.",
)

ON_TOPIC: tuple[tuple[str, int], ...] = (
    ("when do the database backups run and how long are they kept?", 0),
    ("how do I restore postgres from a backup?", 1),
    ("what should I do when the kafka consumer group falls behind?", 2),
    ("who gets paged if the on-call engineer does not answer?", 3),
    ("a TLS certificate failed to renew, what do I check?", 4),
    ("how do I roll back a broken deployment?", 5),
    ("redis is running out of memory", 6),
    ("how do I ssh into a production server?", 7),
    ("how do I change a DNS record?", 8),
    ("how long do we keep application logs?", 9),
    ("the monthly invoice run failed, can I retry it?", 10),
    ("do we write postmortems after an incident?", 11),
)

UNRELATED: tuple[str, ...] = (
    "what's the weather in Paris tomorrow?",
    "give me a recipe for carbonara",
    "tell me a joke",
    "who won the football world cup in 2018?",
    "write a haiku about autumn leaves",
    "what is the capital of Australia?",
    "recommend a good science fiction novel",
    "how many calories are in a banana?",
)
