#!/usr/bin/env python3
"""Podcast sentences for checking Banter's normaliser against an independent one.

    python3 tools/normcheck/corpus.py > /tmp/corpus.tsv     # category <TAB> sentence

Every category that issue 17 names gets about the same number of sentences: money with scales
and cents, fiscal years, times, dates, ordinals, ranges, units and temperatures, phone numbers,
web addresses (URLs, e-mail, handles), acronyms and model names, Roman numerals in names, years
and decades. Each sentence is a frame a host would say with one or two slots filled from the
value lists below. The random generator is seeded, so the corpus is the same on every machine;
`oracle.py` reads it and writes `engine/text/src/oracle.tsv`.

The domains are made up (example.com, banterpod.fm and friends): no real site is named.
"""

import random
import sys

SEED = 17
PER_CATEGORY = 90

# Each category is a list of (values, frames) groups: a frame only meets values it reads well with.
MONEY_AMOUNTS = [
    "$4.1 billion", "$2.49", "€2,900", "£2,450", "$350 million", "$1.2M", "$5k", "$12",
    "$0.99", "€3.5 billion", "£12.50", "$1,299", "$100,000", "$7 trillion", "$9.99", "€49",
    "£1.8 billion", "$250", "$3bn", "$14.6 billion", "$1.50", "€0.30", "£5", "$60,000",
    "$2.5 million", "$499", "$79.99", "€1,200", "£350,000", "$40 billion", "$1", "$18.75",
    "¥10,000", "$1.1 trillion", "$800 million", "$30k", "£2.99",
]
MONEY_RATES = ["$19.99/month", "$20/hr", "$4.99/month", "€12/month", "$15/hour", "£9.99/month"]
MONEY = [
    (MONEY_AMOUNTS, [
        "The company raised {v} in its latest round.",
        "That works out to {v} for the average household.",
        "They paid {v} for the startup.",
        "Tickets cost {v} at the door.",
        "Revenue hit {v} last quarter.",
        "It sells for {v} in Europe.",
        "The fine was {v}, which is nothing for them.",
        "I spent {v} on coffee this week.",
        "Analysts expect {v} in new spending.",
        "The deal is worth {v}.",
        "She says the renovation cost {v}.",
        "Their valuation dropped to {v}.",
    ]),
    (MONEY_RATES, [
        "Subscriptions start at {v}.",
        "Premium members pay {v}.",
        "A basic plan is {v}, and it goes up from there.",
        "It's {v} after the free trial.",
        "The junior role pays {v}.",
    ]),
]

FISCAL = [
    ([p + y for p in ["", "", "", "Q1 ", "Q2 ", "Q3 ", "Q4 ", "H1 ", "H2 "]
      for y in ["FY2025", "FY2024", "FY2026", "FY25", "FY24", "FY2023", "FY27", "FY2030",
                "FY2019", "FY2021", "FY22"]], [
        "Revenue grew twelve percent in {v}.",
        "The company expects margins to improve in {v}.",
        "{v} earnings beat estimates.",
        "Guidance for {v} was raised again.",
        "Headcount will stay flat through {v}.",
        "They booked a loss in {v}.",
        "The CFO walked us through the {v} numbers.",
        "Capital spending doubles in {v}.",
        "Their {v} results come out next week.",
        "Everything hinges on {v}.",
        "The budget for {v} is already set.",
        "Cloud sales led {v}.",
    ]),
]

TIMES = [
    (["7:30 pm", "8:15 a.m.", "9am", "10:45 PM", "6 p.m.", "11:00", "14:30", "5:05 am",
      "3:00 p.m.", "12:30 pm", "7 AM", "9:30 a.m.", "4:45pm", "1:15 p.m.", "6:00 am",
      "11:59 pm", "8 pm", "10 a.m.", "2:20 PM", "18:00", "7:45", "12 p.m.", "9:05 pm"], [
        "The show goes live at {v} Eastern.",
        "Doors open at {v}.",
        "We recorded this at {v} on a Tuesday.",
        "The launch window opens at {v}.",
        "My alarm went off at {v}.",
        "Join the stream at {v} sharp.",
        "The market closed at {v}.",
        "Her flight lands at {v}.",
        "We'll meet at {v} outside the studio.",
        "The press conference starts at {v}.",
        "Kids have to be in bed by {v}.",
        "The store opens at {v} on weekends.",
    ]),
]

DATES = [
    (["March 3, 2024", "Jan. 15", "July 4th", "3 March 2021", "2024-06-01", "12/25/2023",
      "Sept. 30, 2025", "the 14th of February", "Oct. 7", "November 5, 2024", "June 21",
      "April 1st", "Dec. 31, 1999", "1 May 2020", "2025-01-20", "8/9/2024", "Feb. 29, 2028",
      "September 11, 2001", "May 8", "January 1, 2000", "10/31/2025", "the 3rd of June",
      "Oct. 12, 1492"], [
        "The episode was recorded on {v}.",
        "The deadline is {v}.",
        "Mark your calendars for {v}.",
        "Everything changed on {v}.",
        "The trial starts on {v}.",
        "We first talked about this on {v}.",
        "Applications close on {v}.",
        "The update ships on {v}.",
        "She was born on {v}.",
        "Tickets go on sale on {v}.",
        "The law took effect on {v}.",
    ]),
    (["August 2023", "March 2020", "Dec. 2019", "June 1944"], [
        "Everything changed in {v}.",
        "The update shipped in {v}.",
        "We started recording in {v}.",
    ]),
]

ORDINALS = [
    (["1st", "2nd", "3rd", "4th", "21st", "100th", "250th", "23rd", "42nd", "11th", "12th",
      "13th", "101st", "500th", "31st", "5th", "8th", "22nd", "1,000th", "73rd", "9th"], [
        "Welcome to our {v} episode.",
        "This is the {v} time we've covered this.",
        "It's their {v} anniversary.",
        "He was the {v} person in line.",
        "That was the {v} caller today.",
        "We're celebrating the {v} birthday of the company.",
    ]),
    (["1st", "2nd", "3rd", "4th", "5th", "8th", "11th", "12th", "13th", "21st", "22nd"], [
        "She finished {v} in the marathon.",
        "Our studio is on the {v} floor.",
        "The team ranked {v} in the league.",
        "They came {v} out of forty.",
    ]),
    (["19th", "20th", "21st", "18th", "15th"], [
        "The house was built in the {v} century.",
        "That idea goes back to the {v} century.",
    ]),
]

RANGES = [
    (["5-10", "3-4", "1-2", "4-6", "15-20", "2-3", "6–8", "20–30", "30-45", "10-15", "45–60"], [
        "It takes {v} minutes to set up.",
        "We work out {v} times a week.",
        "Plan on {v} people at the party.",
        "The battery lasts {v} hours.",
    ]),
    (["2020–2023", "1990-1995", "2010-2015", "1939-1945", "2024-25", "2019–2021"], [
        "The survey covered the years {v}.",
        "The archive spans {v}.",
        "He ran the company from {v}.",
    ]),
    (["$10-20", "$50-100", "$5-10", "€20-30"], [
        "Expect to pay {v} for a good microphone.",
        "Most tickets are {v}.",
    ]),
    (["10–15%", "40-50%", "5-10%", "20-25%"], [
        "Prices rose {v} over the summer.",
        "Support dropped by {v}.",
    ]),
    (["18-34", "25-54", "13-17"], ["Most listeners are aged {v}.", "The show targets ages {v}."]),
    (["9am-5pm", "7:00-9:00", "10am–2pm"], ["The event runs {v} on Saturday.", "We're open {v}."]),
    (["30-45", "100-120", "12–18"], ["Read pages {v} before next week."]),
]

TEMPERATURES = [
    "−183 °C", "72°F", "-40°F", "25 °C", "30 °C", "98.6°F", "0 °C", "-18 °C", "451°F",
    "1,500 °C", "−270 °C",
]
OTHER_UNITS = [
    "40 kW", "5 km", "100 mph", "3.5 GHz", "16 GB", "500 mg", "2.4 GHz", "350 kWh", "1.5 L",
    "6 ft", "10 kg", "60 fps", "120 Hz", "5 ms", "1,000 MW", "250 ml", "8 TB", "12 V", "20 m",
    "150 lbs", "1.2 GW", "3 mi", "200 km/h", "65 dB", "5,000 mAh", "80 kg", "1 TB", "2 kg",
]
UNITS = [
    (TEMPERATURES, [
        "The fuel is stored at {v}.",
        "It was {v} when we landed.",
        "The panel reached {v} in testing.",
        "Keep it under {v}.",
        "The forecast says {v} tomorrow.",
    ]),
    (OTHER_UNITS, [
        "The new charger delivers {v}.",
        "The spec sheet lists {v}.",
        "They measured {v} at the site.",
        "The upgrade adds {v}.",
        "Ours came in at {v}.",
        "The limit is {v}.",
    ]),
]

PHONES = [
    (["555-123-4567", "(555) 123-4567", "1-800-555-0199", "+44 20 7946 0958", "555-0100",
      "+1 415 555 2671", "(212) 555-0147", "1-888-555-0123", "800-555-0175",
      "+61 2 5550 1234", "555-867-5309", "(646) 555-0192", "1-877-555-0110",
      "+1-202-555-0168"], [
        "Call us at {v}.",
        "Leave a voicemail at {v}.",
        "Text {v} to vote.",
        "The hotline is {v}.",
        "You can reach the studio on {v}.",
        "Our sponsor's number is {v}.",
        "Write down {v} before you forget.",
        "The tip line, {v}, is open all night.",
    ]),
    (["911", "999", "112"], ["If it's an emergency, dial {v}.", "She called {v} right away."]),
]

WEB = [
    (["example.com", "www.banterpod.fm", "https://example.org/episodes", "shop.example.com",
      "banterpod.fm/live", "example.io", "https://www.example.com/join", "docs.example.dev",
      "news.example.net/2025", "listen.example.tv", "example.co.uk/tickets"], [
        "Visit {v} for the show notes.",
        "Everything is at {v}.",
        "The full transcript lives at {v}.",
        "Check out {v} after the show.",
        "You'll find the form at {v}.",
    ]),
    (["hello@banterpod.fm", "tips@example.com", "jane.doe@example.org", "support@example.co.uk",
      "press@example.io", "sam_2024@example.net"], [
        "Send your questions to {v}.",
        "Drop a line to {v}.",
        "Our inbox is {v}.",
        "Email {v} if you want to be a guest.",
    ]),
    (["@banterpod", "@JaneDoe", "@the_real_sam", "@nasa", "@dev_guy42"], [
        "Follow us at {v} for clips.",
        "She posted it from {v}.",
        "Shout out to {v} for the tip.",
    ]),
    (["#AskBanter", "#PodcastLife", "#TechTuesday", "#1"], [
        "Tag your questions with {v}.",
        "The clip went viral under {v}.",
    ]),
]

ACRONYMS = [
    (["CFO", "CEO", "CTO", "FBI", "NASA", "HBO", "NFL", "FDA", "SEC", "BBC"], [
        "The {v} said this changes everything.",
        "Everyone is talking about the {v}.",
        "The {v} question came up again.",
        "I spoke to someone at the {v} last week.",
    ]),
    (["H100s", "B200s", "GPUs", "A100s", "TPUs", "RTX 4090s"], [
        "We bought eight {v} for the lab.",
        "The cloud is short of {v} again.",
        "They rent {v} by the hour.",
    ]),
    (["GPU", "A100", "RTX 4090", "M3", "PS5", "TPU", "CPU", "iPhone 15", "H100", "A320",
      "F-150", "Boeing 737", "USB-C", "HDMI", "Wi-Fi 6", "MP3",
      "H200", "RTX 3080"], [
        "We ran it on a {v} over the weekend.",
        "Our {v} was the bottleneck.",
        "They announced the {v} on stage.",
        "I wouldn't buy a {v} right now.",
        "Demand for the {v} keeps growing.",
        "That's the {v} I mentioned earlier.",
    ]),
    (["AI", "LLM", "API", "SaaS", "B2B", "IPO", "EV", "FAQ", "COVID-19", "GPT-4", "5G", "4K"], [
        "Honestly, the {v} hype is overrated.",
        "We covered {v} in the last episode.",
        "Nobody agrees on what {v} means.",
        "The {v} market is crowded.",
    ]),
    (["24/7"], ["The support desk runs {v} now.", "They are open {v}.", "It's a {v} job."]),
]

ROMAN = [
    (["Artemis III", "Apollo XI", "Rocky IV", "World War II", "Henry VIII", "Super Bowl LVIII",
      "Final Fantasy VII", "Queen Elizabeth II", "Pope Leo XIV", "Louis XIV", "Saturn V",
      "Title IX", "Vatican II", "Rocky II", "Civilization VI", "Artemis II", "Apollo XIII",
      "Gemini IV", "King Charles III", "World War I", "Super Bowl LIX", "Apollo VIII",
      "Elizabeth I", "Star Wars Episode IV", "Chapter XII", "Part II", "Season III"], [
        "{v} was a turning point.",
        "We talked about {v} for an hour.",
        "Nobody expected {v} to go that way.",
        "The story of {v} is wild.",
        "Let's get into {v}.",
        "{v} comes up a lot on this show.",
        "I just finished reading about {v}.",
        "There's a new documentary about {v}.",
    ]),
]

YEARS = [
    (["1999", "the '90s", "the 1980s", "2008", "2001", "the 1800s", "the 2010s",
      "the early 2000s", "1969", "the 1920s", "2020", "the '70s", "1905", "the mid-2000s",
      "2019", "the 1600s", "1776", "the 60s", "the late 1990s", "2007", "1066", "2000"], [
        "Things were different in {v}.",
        "This song takes me back to {v}.",
        "The building dates from {v}.",
        "We've been doing this since {v}.",
        "Nobody saw it coming in {v}.",
        "Fashion from {v} is back.",
        "The record was set in {v}.",
        "Remember the music of {v}?",
    ]),
    (["2050", "2100", "the 2030s", "2035", "the 2040s", "2030", "the 2060s"], [
        "By {v}, most cars will be electric.",
        "The plan runs through {v}.",
        "Imagine the world in {v}.",
    ]),
]

CATEGORIES = [
    ("money", MONEY),
    ("fiscal", FISCAL),
    ("time", TIMES),
    ("date", DATES),
    ("ordinal", ORDINALS),
    ("range", RANGES),
    ("unit", UNITS),
    ("phone", PHONES),
    ("web", WEB),
    ("acronym", ACRONYMS),
    ("roman", ROMAN),
    ("year", YEARS),
]


def fill(rng, groups):
    values, frames = rng.choice(groups)
    value, frame = rng.choice(values), rng.choice(frames)
    sentence = frame.format(v=value)
    if value.endswith("."):
        sentence = sentence.replace(value + ".", value)  # "at 8:15 a.m." ends once
    # "the 2030s" opening a sentence is "The 2030s"; "iPhone" and "@nasa" stay as written.
    if sentence.startswith("the "):
        sentence = "T" + sentence[1:]
    return sentence


def corpus():
    """(category, sentence) pairs, `PER_CATEGORY` distinct sentences per category."""
    rng = random.Random(SEED)
    out = []
    for category, groups in CATEGORIES:
        possible = len({f.format(v=v) for values, frames in groups for v in values for f in frames})
        seen = set()
        while len(seen) < min(PER_CATEGORY, possible):
            s = fill(rng, groups)
            if s not in seen:
                seen.add(s)
                out.append((category, s))
    return out


if __name__ == "__main__":
    for category, sentence in corpus():
        sys.stdout.write(f"{category}\t{sentence}\n")
