"""The long documents of the evaluation, generated deterministically.

`operations_manual(n_assets, …)` writes a water utility's operations manual: a title, a few
introduction paragraphs, then one chapter of eleven sections per asset (pump stations,
reservoirs, treatment works, booster stations): a heading, an overview, the equipment, an
equipment list, the maintenance routine, a table of checks (or a paragraph about them), safety,
access, contacts, history and a closing note. Every chapter's facts (street, households,
ratings, intervals, people, extensions) come from a `random.Random(seed)`, so the prose is
varied and each chapter's facts are its own, and the same seed always gives the same document
(byte for byte: `random.Random(int)` and `choice`/`randint` are stable across Python 3
versions).

`manual_50()` is 50 sections (title, five introduction paragraphs, four chapters); `manual_500()`
is 500 (title, four introduction paragraphs, 45 chapters). Both return a `Manual`: the HTML
blocks in order plus the facts per chapter, so the tasks (tasks/long.py) can point at a section
by index and compute the expected answers.
"""
import html
import random
from dataclasses import dataclass, field

STREETS = [
    "Miller Road", "Canal Street", "Orchard Lane", "Station Approach", "Kestrel Way", "Harbour Road",
    "Quarry Hill", "Mill Lane", "Beacon Rise", "Foundry Street", "Willow Walk", "Tanner's Row",
    "Bridge Street", "Marsh Lane", "Copper Beech Drive", "Chapel Hill", "Ferry Road", "Long Acre",
    "Furnace Lane", "Greenbank Road", "Saltings Way", "Priory Close", "Ropewalk", "Heron Drive",
    "Castle Mead", "Weir Road", "Old Dairy Lane", "Linden Avenue", "Pottery Lane", "Lock Street",
    "Elm Park Road", "Sandpit Lane", "Bellfield Road", "Riverside Walk", "Hollow Way", "Mariner's Court",
    "Wharf Street", "Kiln Road", "Fenside Road", "Abbey Fields", "Moorland Road", "Pike Lane",
    "Tollgate Road", "Spring Gardens", "Northgate", "Southmead Road", "Cooper's Yard", "Windmill Hill",
]
DISTRICTS = [
    "Northfield", "Eastbrook", "Westmoor", "Southgate", "Riverside", "Hillcrest", "Old Town", "Harbourside",
    "Meadowbank", "Ashton", "Kingsmere", "Fairhaven",
]
PEOPLE = [
    "Priya Raman", "Tomasz Nowak", "Grace Okafor", "Daniel Whitfield", "Aisha Karim", "Liam O'Connor",
    "Mei Lin Chen", "Samuel Adeyemi", "Hannah Brooks", "Rafael Ortega", "Ingrid Larsen", "Yusuf Demir",
    "Chloe Martin", "Owen Price", "Fatima Zahra", "Marcus Reid", "Elena Petrova", "Kwame Mensah",
    "Sophie Turner", "Arjun Mehta", "Nadia Haddad", "Peter Lindqvist", "Rosa Esposito", "Callum Fraser",
]
DEPOTS = ["Northfield", "Canal Wharf", "Beacon Rise", "Eastbrook", "Harbour Road"]
PUMP_MAKERS = ["Grundfos", "KSB", "Flygt", "Sulzer", "Wilo"]
INCIDENTS = [
    "a burst on the rising main flooded the valve chamber and the station ran on its standby pump for four days",
    "a lightning strike damaged the telemetry outstation, and readings were taken by hand for a week",
    "vandals cut the perimeter fence, after which the gate was moved and floodlights were added",
    "the motor control centre was replaced after an insulation test found two failing contactors",
    "a long dry summer kept the site at full output for eleven weeks without a planned stop",
    "a contractor's excavator struck the incoming power cable, and the generator carried the load for 30 hours",
    "the roof of the pump hall was re-covered after a storm lifted part of the sheeting",
    "an algal bloom in the raw water forced a reduction in output until the filters were backwashed twice daily",
]
NOTES = [
    "Parking on site is limited to two vans; larger vehicles must stay outside the gate.",
    "The site lies next to a primary school, so deliveries are not made between 08:15 and 09:00 or between 15:00 and 15:45.",
    "Mobile reception inside the building is poor; use the landline in the control kiosk to reach the control room.",
    "Neighbours have complained about generator noise at night, so test runs are scheduled for weekday mornings.",
    "The access track floods after heavy rain; check the river level warning before driving down in winter.",
    "A bat roost was found in the roof space in 2019, and any work above the ceiling needs an ecologist's approval.",
    "Spare seals and bearings for the duty pumps are kept in the locked cabinet beside the control panel.",
    "The site is shared with the highways authority's salt store, whose lorries have right of way on the access road.",
]
CHECKS = [
    ("Bearing temperatures", "weekly"), ("Vibration survey", "monthly"), ("Generator load test", "monthly"),
    ("Non-return valve inspection", "every six months"), ("Insulation resistance test", "yearly"),
    ("Ladder and handrail inspection", "every six months"), ("Chlorine residual check", "daily"),
    ("Telemetry alarm test", "monthly"), ("Wet well clean", "every three months"),
]
KINDS = ["Pump Station", "Reservoir", "Treatment Works", "Booster Station"]
CONTRACTOR = "Brightline Services"


@dataclass
class Chapter:
    name: str
    street: str
    district: str
    households: int
    commissioned: int
    pumps: int
    maker: str
    rate: int
    kva: int
    interval: int
    manager: str
    extension: int
    depot: str
    first: int  # index of its heading in the document
    contractor: bool


@dataclass
class Manual:
    title: str
    utility: str
    blocks: list = field(default_factory=list)
    chapters: list = field(default_factory=list)

    @property
    def html(self):
        return "\n".join(self.blocks) + "\n"

    def index_of(self, needle):
        """The indexes of the blocks whose HTML contains `needle` (HTML-escaped first)."""
        esc = html.escape(needle, quote=False)
        return [i for i, b in enumerate(self.blocks) if esc in b]


def _p(text):
    return f"<p>{html.escape(text, quote=False)}</p>"


def _asset_names(n):
    counts = {k: 0 for k in KINDS}
    names = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)] if i % 3 else "Pump Station"
        counts[kind] += 1
        names.append(f"{kind} {counts[kind]}")
    return names


def operations_manual(utility, n_assets, intro, seed, contractor_every):
    rng = random.Random(seed)
    m = Manual(title=f"{utility}: Operations Manual", utility=utility)
    m.blocks.append(f"<h1>{html.escape(m.title, quote=False)}</h1>")
    m.blocks.extend(_p(t) for t in intro)
    streets = STREETS[:]
    rng.shuffle(streets)
    for i, name in enumerate(_asset_names(n_assets)):
        street = streets[i % len(streets)]
        c = Chapter(
            name=name, street=street, district=rng.choice(DISTRICTS), households=rng.randrange(1200, 48000, 50),
            commissioned=rng.randint(1958, 2014), pumps=rng.randint(2, 6), maker=rng.choice(PUMP_MAKERS),
            rate=rng.randrange(40, 400, 5), kva=rng.choice([60, 80, 100, 125, 150, 200, 250, 350, 500]),
            interval=rng.choice([7, 10, 14, 28, 30]), manager=rng.choice(PEOPLE), extension=rng.randint(2100, 4899),
            depot=rng.choice(DEPOTS), first=len(m.blocks), contractor=(i % contractor_every == contractor_every - 1),
        )
        m.chapters.append(c)
        refurbished = rng.randint(max(c.commissioned + 8, 1990), 2023)
        b = m.blocks
        b.append(f"<h2>{html.escape(f'{name}, {street}', quote=False)}</h2>")
        b.append(_p(rng.choice([
            f"{name} stands on {street} in the {c.district} district and supplies about {c.households:,} households. "
            f"It was commissioned in {c.commissioned} and last refurbished in {refurbished}.",
            f"Built in {c.commissioned}, {name} on {street} serves roughly {c.households:,} households in "
            f"{c.district}. The last major refurbishment was completed in {refurbished}.",
            f"{name} ({street}, {c.district}) has been in service since {c.commissioned} and supplies some "
            f"{c.households:,} households. Its electrical plant was renewed in {refurbished}.",
        ])))
        b.append(_p(rng.choice([
            f"The site houses {c.pumps} {c.maker} pumps, each rated at {c.rate} litres per second, with one pump "
            f"always held in reserve.",
            f"{c.pumps} {c.maker} pumps of {c.rate} litres per second each are installed; the control system "
            f"rotates the duty pump every week to even out wear.",
            f"There are {c.pumps} pumps, all made by {c.maker} and rated at {c.rate} litres per second. At least "
            f"one of them must be available as a standby before any other is taken out of service.",
        ])))
        items = [f"{c.pumps} {c.maker} pumps", f"Standby generator ({c.kva} kVA)", "Telemetry outstation"]
        items.append(rng.choice(["Chlorine dosing unit", "Surge vessel", "Flow meter on the outlet main",
                                 "Ultraviolet disinfection unit", "Variable speed drives"]))
        b.append("<ul>" + "".join(f"<li>{html.escape(t, quote=False)}</li>" for t in items) + "</ul>")
        b.append(_p(rng.choice([
            f"Routine inspections take place every {c.interval} days. The duty engineer records bearing "
            f"temperatures, vibration readings and motor currents in the maintenance log before leaving the site.",
            f"An engineer visits every {c.interval} days to walk the site, read the meters and test the alarms. "
            f"Anything out of the ordinary is raised as a work order the same day.",
            f"The site is inspected every {c.interval} days. Inspections follow the standard checklist, and the "
            f"completed sheet is scanned into the asset record within 48 hours.",
        ])))
        if i % 2 == 0:
            rows = rng.sample(CHECKS, 3)
            b.append("<table><tr><th>Check</th><th>Interval</th></tr>" + "".join(
                f"<tr><td>{html.escape(a, quote=False)}</td><td>{html.escape(w, quote=False)}</td></tr>"
                for a, w in rows) + "</table>")
        else:
            b.append(_p(f"The standby generator is rated at {c.kva} kVA and is run on load once a month for at "
                        f"least an hour. Its fuel tank holds enough diesel for {rng.randint(18, 72)} hours at full "
                        f"load."))
        room = rng.choice(["wet well", "valve chamber", "dry well", "inlet chamber"])
        b.append(_p(rng.choice([
            f"Before entering the {room}, staff must test the air for hydrogen sulphide and carry a personal gas "
            f"monitor. Lone working is not permitted after {rng.randint(17, 20)}:00.",
            f"The {room} is a confined space. Entry needs a permit from the control room, a second person at the "
            f"hatch and a tripod with a winch.",
            f"Hearing protection is required in the pump hall while more than one pump is running, and the "
            f"{room} may only be entered with a permit.",
        ])))
        b.append(_p(rng.choice([
            f"Keys are held at the {c.depot} depot. The code for the outer gate changes on the first Monday of "
            f"each month and is issued by the control room.",
            f"Access is by key from the {c.depot} depot; sign the key register and return the key the same day.",
            f"The gate key is kept in the key safe at the {c.depot} depot, and visitors must be escorted at all "
            f"times.",
        ])))
        contact = (f"The asset manager is {c.manager}, on extension {c.extension}. Out of hours, call the control "
                   f"room first.")
        if c.contractor:
            contact += f" Electrical faults are handled by {CONTRACTOR}, who must be booked through the control room."
        b.append(_p(contact))
        b.append(_p(f"In {rng.randint(c.commissioned + 1, 2024)}, {rng.choice(INCIDENTS)}."))
        b.append(_p(rng.choice(NOTES)))
    return m


INTRO_50 = [
    "This manual describes how the Lakeshore Water Board runs its four main sites: what is installed, how "
    "often each site is inspected, who is responsible for it and what to do when something goes wrong.",
    "It is written for shift engineers, planners and contractors who work on the sites. Office staff may find "
    "the contact details in each chapter useful when a customer reports a problem.",
    f"Electrical work on all sites is contracted to {CONTRACTOR} under a framework agreement that runs until "
    "March 2027.",
    "Every chapter follows the same order: an overview, the equipment, the maintenance routine, safety, access, "
    "contacts, notable history and practical notes.",
    "Report mistakes in this manual to the asset information team, who review it every January and publish a "
    "new edition by the end of February.",
]
INTRO_500 = [
    "This manual covers every pumping, storage and treatment site operated by Harbour Valley Water. For each "
    "site it records the installed plant, the maintenance routine, the safety rules, access arrangements and "
    "the people responsible.",
    "Shift engineers should read the chapter for a site before their first visit. The control room keeps a "
    "printed copy, and the current edition is always the one on the intranet.",
    f"Electrical maintenance is contracted to {CONTRACTOR}, and mechanical maintenance is carried out by the "
    "utility's own fitters from the five depots.",
    "Chapters are grouped by site type and numbered in the order the sites were adopted onto the telemetry "
    "system, which is also the order used on the control room's overview screen.",
]


def manual_50():
    m = operations_manual("Lakeshore Water Board", 4, INTRO_50, seed=50, contractor_every=2)
    assert len(m.blocks) == 50, len(m.blocks)
    return m


def manual_500():
    m = operations_manual("Harbour Valley Water", 45, INTRO_500, seed=500, contractor_every=7)
    assert len(m.blocks) == 500, len(m.blocks)
    return m


if __name__ == "__main__":
    import sys
    doc = manual_500() if sys.argv[1:] == ["500"] else manual_50()
    sys.stdout.write(doc.html)
