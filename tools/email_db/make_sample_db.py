#!/usr/bin/env python3
"""Create the sample email database used by the email_db demo and tests.

Usage: python3 make_sample_db.py PATH [--force]

The content is fixed (no randomness), so two runs produce the same rows. All
addresses use the reserved example.com / example.org / example.net domains.
"""

import os
import sqlite3
import sys

SCHEMA = """
CREATE TABLE messages (
    id          INTEGER PRIMARY KEY,
    thread_id   TEXT    NOT NULL,
    sender      TEXT    NOT NULL,   -- "Name <address>"
    recipients  TEXT    NOT NULL,   -- comma-separated "Name <address>" list
    subject     TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    date        TEXT    NOT NULL,   -- ISO 8601, UTC, e.g. 2024-03-04T09:15:00Z
    labels      TEXT    NOT NULL DEFAULT ''  -- comma-separated, e.g. inbox,work
);
CREATE INDEX messages_date ON messages (date);
CREATE INDEX messages_sender ON messages (sender);
CREATE INDEX messages_thread ON messages (thread_id);
"""

ALICE = "Alice Chen <alice.chen@northwind.example.com>"
BOB = "Bob Martinez <bob.martinez@northwind.example.com>"
CAROL = "Carol Singh <carol.singh@northwind.example.com>"
DAVE = "Dave Okafor <dave.okafor@northwind.example.com>"
ERIN = "Erin Walsh <erin.walsh@northwind.example.com>"
ME = "Sam Rivera <sam.rivera@northwind.example.com>"
TEAM = "Engineering <eng@northwind.example.com>"
ACME = "Priya Natarajan <priya@acme.example.org>"
BILLING = "CloudHost Billing <billing@cloudhost.example.net>"
GITHUB = "GitHub <notifications@github.example.com>"
NEWS = "Rust Weekly <newsletter@rustweekly.example.org>"
TRAVEL = "SkyJet Bookings <bookings@skyjet.example.net>"
SECURITY = "Northwind IT Security <security@northwind.example.com>"
MOM = "Linda Rivera <linda.rivera@example.net>"
RECRUIT = "Tom Becker <tom.becker@northwind.example.com>"

# (thread_id, sender, recipients, subject, date, labels, body)
MESSAGES = [
    # --- Q2 planning offsite -------------------------------------------------------
    ("t-offsite", ALICE, f"{TEAM}", "Q2 planning offsite: agenda draft",
     "2024-03-04T09:15:00Z", "inbox,work",
     "Hi all,\n\nHere is the draft agenda for the Q2 planning offsite on March 21:\n\n"
     "09:30 Retro on Q1 (Bob)\n11:00 API v2 roadmap (Carol)\n14:00 Hiring plan (Tom)\n"
     "16:00 Budget review (Alice)\n\nPlease send additions by Friday.\n\nAlice"),
    ("t-offsite", BOB, f"{ALICE}, {TEAM}", "Re: Q2 planning offsite: agenda draft",
     "2024-03-04T11:02:00Z", "inbox,work",
     "Looks good. Can we add 30 minutes on the on-call rotation? The current schedule "
     "burned out two people in February.\n\nBob"),
    ("t-offsite", CAROL, f"{ALICE}, {TEAM}", "Re: Q2 planning offsite: agenda draft",
     "2024-03-04T13:47:00Z", "inbox,work",
     "+1 to Bob's on-call slot. For the API v2 session I'll need a projector and the "
     "whiteboard room, not the small one.\n\nCarol"),
    ("t-offsite", ALICE, f"{TEAM}", "Re: Q2 planning offsite: agenda draft",
     "2024-03-06T08:30:00Z", "inbox,work,important",
     "Final agenda attached. On-call rotation added at 15:00. Venue: Harbor View "
     "conference center, room Atlas (projector confirmed). Lunch is catered; tell me "
     "about dietary restrictions by March 15.\n\nAlice"),
    ("t-offsite", ME, f"{ALICE}", "Re: Q2 planning offsite: agenda draft",
     "2024-03-06T09:05:00Z", "sent,work",
     "Thanks Alice. Vegetarian for me, please.\n\nSam"),

    # --- CloudHost invoices ----------------------------------------------------------
    ("t-invoice-feb", BILLING, ME, "Your CloudHost invoice for February 2024",
     "2024-03-01T06:00:00Z", "inbox,finance",
     "Invoice INV-2024-0219 for account northwind-prod.\n\nCompute: $1,842.10\n"
     "Storage: $311.75\nEgress: $96.40\nTotal due: $2,250.25\n\nPayment will be "
     "charged to the card ending 4421 on March 10, 2024."),
    ("t-invoice-mar", BILLING, ME, "Your CloudHost invoice for March 2024",
     "2024-04-01T06:00:00Z", "inbox,finance",
     "Invoice INV-2024-0331 for account northwind-prod.\n\nCompute: $2,104.88\n"
     "Storage: $318.02\nEgress: $142.67\nTotal due: $2,565.57\n\nPayment will be "
     "charged to the card ending 4421 on April 10, 2024."),
    ("t-invoice-mar", ME, f"{ALICE}", "Fwd: Your CloudHost invoice for March 2024",
     "2024-04-01T10:12:00Z", "sent,finance",
     "Alice, March compute is up 14% over February, mostly the new staging cluster. "
     "Should we scale staging down at night?\n\nSam"),
    ("t-invoice-mar", ALICE, ME, "Re: Fwd: Your CloudHost invoice for March 2024",
     "2024-04-01T15:40:00Z", "inbox,finance",
     "Yes, please set up the nightly scale-down for staging (20:00-07:00). "
     "That should save about $300/month.\n\nAlice"),

    # --- Acme escalation ---------------------------------------------------------------
    ("t-acme-login", ACME, f"{ME}", "Urgent: users cannot log in since this morning",
     "2024-03-12T07:58:00Z", "inbox,customer,important",
     "Hi Sam,\n\nSince about 07:00 UTC none of our users can log in to the Northwind "
     "dashboard. They get 'invalid SSO response'. This is blocking our month-end close. "
     "Can you look at it urgently?\n\nPriya Natarajan\nIT Lead, Acme Corp"),
    ("t-acme-login", ME, f"{ACME}", "Re: Urgent: users cannot log in since this morning",
     "2024-03-12T08:20:00Z", "sent,customer",
     "Hi Priya, we're on it. It looks related to the SAML certificate rotation we did "
     "last night. I'll update you within the hour.\n\nSam"),
    ("t-acme-login", DAVE, f"{ME}", "Re: Urgent: users cannot log in since this morning",
     "2024-03-12T08:51:00Z", "inbox,customer,work",
     "Found it: Acme's IdP still trusts the old signing certificate. I re-published "
     "the old cert alongside the new one, logins work again. Acme needs to import the "
     "new certificate before April 1 when the old one expires.\n\nDave"),
    ("t-acme-login", ME, f"{ACME}", "Re: Urgent: users cannot log in since this morning",
     "2024-03-12T09:03:00Z", "sent,customer",
     "Priya, logins are restored. Root cause: your identity provider only trusts our old "
     "SAML signing certificate. Please import the new certificate (attached) before "
     "April 1, 2024. Sorry for the disruption.\n\nSam"),
    ("t-acme-login", ACME, f"{ME}", "Re: Urgent: users cannot log in since this morning",
     "2024-03-12T10:30:00Z", "inbox,customer",
     "Confirmed, everyone can log in. We'll import the new certificate this week. "
     "Thanks for the quick turnaround!\n\nPriya"),

    # --- GitHub notifications ---------------------------------------------------------
    ("t-pr-482", GITHUB, ME, "[northwind/api] Add rate limiting to /v2/search (#482)",
     "2024-03-07T16:20:00Z", "inbox,github",
     "carol-singh requested your review on pull request #482.\n\n"
     "Adds a token-bucket rate limiter (100 requests/minute per API key) to /v2/search "
     "and returns 429 with a Retry-After header."),
    ("t-pr-482", GITHUB, ME, "Re: [northwind/api] Add rate limiting to /v2/search (#482)",
     "2024-03-08T10:02:00Z", "inbox,github",
     "bob-martinez commented on pull request #482:\n\n> Should the limit be configurable "
     "per customer? Acme already asked for a higher quota."),
    ("t-pr-482", GITHUB, ME, "Re: [northwind/api] Add rate limiting to /v2/search (#482)",
     "2024-03-08T14:45:00Z", "inbox,github",
     "Pull request #482 was merged into main by carol-singh."),
    ("t-ci-fail", GITHUB, ME, "[northwind/api] Run failed: nightly - main (a41f9c2)",
     "2024-03-19T02:14:00Z", "inbox,github",
     "The nightly workflow failed on main.\n\nFailed job: integration-tests\n"
     "Error: test search::rate_limit_resets timed out after 60s"),

    # --- Hiring -----------------------------------------------------------------------
    ("t-hiring", RECRUIT, f"{ME}, {CAROL}", "Interview loop for backend candidate J. Park",
     "2024-03-13T12:00:00Z", "inbox,work,hiring",
     "Hi Sam and Carol,\n\nJamie Park is on site on March 18. Schedule:\n"
     "10:00 System design (Sam)\n11:00 Coding (Carol)\n13:00 Lunch with the team\n\n"
     "Please submit feedback in the hiring tool by March 19 EOD.\n\nTom"),
    ("t-hiring", CAROL, f"{RECRUIT}, {ME}", "Re: Interview loop for backend candidate J. Park",
     "2024-03-18T15:30:00Z", "inbox,work,hiring",
     "Strong coding round: clean solution to the interval-merging problem, good tests, "
     "thought about edge cases unprompted. Leaning hire.\n\nCarol"),
    ("t-hiring", ME, f"{RECRUIT}, {CAROL}", "Re: Interview loop for backend candidate J. Park",
     "2024-03-18T17:05:00Z", "sent,work,hiring",
     "System design was solid: designed a URL shortener with sharding and a cache, "
     "reasoned well about consistency. Hire.\n\nSam"),
    ("t-hiring", RECRUIT, f"{ME}, {CAROL}", "Re: Interview loop for backend candidate J. Park",
     "2024-03-22T09:40:00Z", "inbox,work,hiring",
     "Jamie accepted our offer! Start date is April 15. Thanks both.\n\nTom"),

    # --- API v2 design review ---------------------------------------------------------
    ("t-api-v2", CAROL, f"{TEAM}", "API v2 design review: pagination and errors",
     "2024-02-26T10:00:00Z", "inbox,work",
     "Design doc for API v2 is ready for review. Key decisions:\n"
     "1. Cursor-based pagination (opaque 'next' token) instead of offset/limit.\n"
     "2. Errors follow RFC 9457 problem+json.\n3. ISO 8601 timestamps everywhere, UTC.\n\n"
     "Review meeting Thursday 14:00.\n\nCarol"),
    ("t-api-v2", DAVE, f"{CAROL}, {TEAM}", "Re: API v2 design review: pagination and errors",
     "2024-02-27T09:12:00Z", "inbox,work",
     "Cursor pagination +1. Can the cursor encode the sort key so that clients can "
     "resume after a deploy? Also we need a deprecation plan for v1: 6 months?\n\nDave"),
    ("t-api-v2", CAROL, f"{TEAM}", "Re: API v2 design review: pagination and errors",
     "2024-02-29T16:25:00Z", "inbox,work",
     "Decision from the review: cursors encode (sort key, id); v1 is deprecated on "
     "July 1 and removed on December 31, 2024. Doc updated.\n\nCarol"),

    # --- Newsletters --------------------------------------------------------------------
    ("t-news-538", NEWS, ME, "This Week in Rust 538",
     "2024-03-06T18:00:00Z", "inbox,newsletter",
     "Highlights: Rust 1.77 beta, async closures RFC progress, a deep dive into "
     "proc-macro hygiene, and 42 merged pull requests in the compiler this week."),
    ("t-news-539", NEWS, ME, "This Week in Rust 539",
     "2024-03-13T18:00:00Z", "inbox,newsletter",
     "Highlights: C-string literals stabilised, a survey of build.rs patterns, "
     "and why you should pin your workspace dependencies."),
    ("t-news-540", NEWS, ME, "This Week in Rust 540",
     "2024-03-20T18:00:00Z", "inbox,newsletter",
     "Highlights: Rust 1.77 released, trybuild tips for testing compile errors, "
     "and the call for participation in the 2024 survey."),

    # --- Travel ---------------------------------------------------------------------
    ("t-travel", TRAVEL, ME, "Booking confirmed: SFO to BOS, April 8",
     "2024-03-15T20:33:00Z", "inbox,travel",
     "Confirmation code: QX7R2M\n\nFlight SJ 418, San Francisco (SFO) 07:05 to "
     "Boston (BOS) 15:40, Monday April 8, 2024. Seat 14C.\nReturn: SJ 421, BOS 18:10 "
     "to SFO 21:55, Thursday April 11, 2024. Seat 22A."),
    ("t-travel", TRAVEL, ME, "Schedule change for your trip QX7R2M",
     "2024-04-02T05:10:00Z", "inbox,travel,important",
     "Your flight SJ 418 on April 8 now departs at 07:45 and arrives in Boston at "
     "16:20. No action is needed if the new time works for you."),

    # --- Security ---------------------------------------------------------------------
    ("t-security", SECURITY, f"{ME}", "New sign-in to your Northwind account",
     "2024-03-25T22:47:00Z", "inbox,security",
     "We noticed a new sign-in to your account from Firefox on Linux in Lisbon, "
     "Portugal. If this was you, no action is needed. If not, reset your password "
     "immediately and contact security@northwind.example.com."),
    ("t-security", ME, f"{SECURITY}", "Re: New sign-in to your Northwind account",
     "2024-03-26T07:15:00Z", "sent,security",
     "That was not me - I was asleep in San Francisco. Password reset done; please "
     "check the session logs.\n\nSam"),
    ("t-security", SECURITY, f"{ME}", "Re: New sign-in to your Northwind account",
     "2024-03-26T09:30:00Z", "inbox,security,important",
     "Thanks for reporting. The session was revoked and the IP is blocked. Please "
     "enable a hardware security key under Settings > Security within 7 days."),

    # --- Vacation request ----------------------------------------------------------------
    ("t-vacation", ME, f"{ALICE}", "Vacation request: May 20-24",
     "2024-03-27T11:00:00Z", "sent,work",
     "Hi Alice, I'd like to take May 20-24 off (5 days). Erin agreed to cover on-call "
     "that week.\n\nSam"),
    ("t-vacation", ALICE, f"{ME}", "Re: Vacation request: May 20-24",
     "2024-03-27T14:22:00Z", "inbox,work",
     "Approved - enjoy! Please add it to the team calendar.\n\nAlice"),

    # --- Personal -------------------------------------------------------------------------
    ("t-family", MOM, f"{ME}", "Dinner on Sunday?",
     "2024-03-29T17:45:00Z", "inbox,personal",
     "Hi honey, are you coming for dinner on Sunday? Your sister is bringing the kids. "
     "Lasagna at 6pm.\n\nLove, Mom"),
    ("t-family", ME, f"{MOM}", "Re: Dinner on Sunday?",
     "2024-03-29T19:02:00Z", "sent,personal",
     "Yes! I'll bring dessert. See you at 6.\n\nSam"),

    # --- Team lunch ------------------------------------------------------------------------
    ("t-lunch", ERIN, f"{TEAM}", "Team lunch Friday - taco place or ramen?",
     "2024-03-20T10:10:00Z", "inbox,work",
     "Celebrating the API v2 beta on Friday! Vote: tacos (Calle Ocho) or ramen "
     "(Menya). Reply by Thursday noon.\n\nErin"),
    ("t-lunch", DAVE, f"{ERIN}, {TEAM}", "Re: Team lunch Friday - taco place or ramen?",
     "2024-03-20T10:31:00Z", "inbox,work",
     "Ramen, obviously.\n\nDave"),
    ("t-lunch", ERIN, f"{TEAM}", "Re: Team lunch Friday - taco place or ramen?",
     "2024-03-21T12:05:00Z", "inbox,work",
     "Ramen wins 7-4. Table booked at Menya for 12:30 Friday, 11 people.\n\nErin"),
]


def create_sample_db(path: str, force: bool = False) -> int:
    """Write the sample database to `path`; returns the number of messages."""
    if os.path.exists(path):
        if not force:
            raise FileExistsError(f"{path} already exists (pass --force to replace it)")
        os.remove(path)
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    # Build under a temporary name, then rename, so a reader never sees a half-written file.
    tmp = f"{path}.tmp-{os.getpid()}"
    conn = sqlite3.connect(tmp)
    try:
        conn.executescript(SCHEMA)
        rows = sorted(MESSAGES, key=lambda m: m[4])
        conn.executemany(
            "INSERT INTO messages (id, thread_id, sender, recipients, subject, date, labels, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(i + 1, *m) for i, m in enumerate(rows)],
        )
        conn.commit()
    finally:
        conn.close()
    os.replace(tmp, path)
    return len(MESSAGES)


def main(argv: list) -> int:
    args = [a for a in argv if a != "--force"]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        count = create_sample_db(args[0], force="--force" in argv)
    except FileExistsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {count} messages to {args[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
