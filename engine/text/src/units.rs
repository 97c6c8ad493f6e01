//! Units of measure after a number: "5 km", "10kg", "3 GB", "100 MHz", "20°C".
//!
//! espeak spells unit symbols letter by letter ("k m"), which no presenter does. Only symbols
//! that follow a number are expanded, so "m" or "in" elsewhere stay words. Short symbols that
//! are also common words ("in", "s", "h", "min") count only when glued to the number ("5in").
//! British spelling turns meter/liter into metre/litre.

use super::Dialect;

/// A unit symbol and its words.
pub(super) struct Unit {
    pub symbol: &'static str,
    pub one: &'static str,
    pub many: &'static str,
    /// Also recognised as a separate word after the number ("5 km"); else only glued ("5in").
    pub spaced: bool,
}

const fn unit(symbol: &'static str, one: &'static str, many: &'static str, spaced: bool) -> Unit {
    Unit {
        symbol,
        one,
        many,
        spaced,
    }
}

/// Known symbols, matched case-sensitively ("mb" is not "MB").
const UNITS: &[Unit] = &[
    unit("km", "kilometer", "kilometers", true),
    unit("m", "meter", "meters", true),
    unit("cm", "centimeter", "centimeters", true),
    unit("mm", "millimeter", "millimeters", true),
    unit("µm", "micrometer", "micrometers", true),
    unit("nm", "nanometer", "nanometers", true),
    unit("km²", "square kilometer", "square kilometers", true),
    unit("m²", "square meter", "square meters", true),
    unit("m³", "cubic meter", "cubic meters", true),
    unit("mi", "mile", "miles", true),
    unit("sqft", "square foot", "square feet", true),
    unit("ft", "foot", "feet", true),
    unit("yd", "yard", "yards", true),
    unit("yds", "yard", "yards", true),
    unit("in", "inch", "inches", false),
    unit("kg", "kilogram", "kilograms", true),
    unit("g", "gram", "grams", true),
    unit("mg", "milligram", "milligrams", true),
    unit("µg", "microgram", "micrograms", true),
    unit("lb", "pound", "pounds", true),
    unit("lbs", "pound", "pounds", true),
    unit("oz", "ounce", "ounces", true),
    // "14st 3lb": a British weight ("14st" cannot be an ordinal).
    unit("st", "stone", "stone", false),
    unit("t", "tonne", "tonnes", false),
    unit("l", "liter", "liters", false),
    unit("L", "liter", "liters", true),
    unit("ml", "milliliter", "milliliters", true),
    unit("dL", "deciliter", "deciliters", true),
    unit("dl", "deciliter", "deciliters", true),
    unit("mL", "milliliter", "milliliters", true),
    unit("gal", "gallon", "gallons", true),
    unit("qt", "quart", "quarts", true),
    unit("bbl", "barrel", "barrels", true),
    unit("pts", "point", "points", true),
    // "a 12pt font": glued, a type size (a pint is written out).
    unit("pt", "point", "points", false),
    unit("pp", "page", "pages", true),
    // A box score: "38 pts, 12 reb, 9 ast".
    unit("reb", "rebound", "rebounds", true),
    unit("ast", "assist", "assists", true),
    unit("stl", "steal", "steals", true),
    unit("blk", "block", "blocks", true),
    unit("ms", "millisecond", "milliseconds", true),
    unit("µs", "microsecond", "microseconds", true),
    unit("ns", "nanosecond", "nanoseconds", true),
    unit("s", "second", "seconds", false),
    unit("sec", "second", "seconds", true),
    unit("secs", "second", "seconds", true),
    unit("min", "minute", "minutes", true),
    unit("mins", "minute", "minutes", true),
    unit("h", "hour", "hours", false),
    unit("hr", "hour", "hours", true),
    unit("hrs", "hour", "hours", true),
    unit("Hz", "hertz", "hertz", true),
    unit("kHz", "kilohertz", "kilohertz", true),
    unit("MHz", "megahertz", "megahertz", true),
    unit("GHz", "gigahertz", "gigahertz", true),
    unit("KB", "kilobyte", "kilobytes", true),
    unit("kB", "kilobyte", "kilobytes", true),
    unit("MB", "megabyte", "megabytes", true),
    unit("GB", "gigabyte", "gigabytes", true),
    unit("TB", "terabyte", "terabytes", true),
    unit("PB", "petabyte", "petabytes", true),
    unit("KiB", "kibibyte", "kibibytes", true),
    unit("MiB", "mebibyte", "mebibytes", true),
    unit("GiB", "gibibyte", "gibibytes", true),
    unit("TiB", "tebibyte", "tebibytes", true),
    // Kubernetes writes its quantities without the B: "4Gi", "512Mi".
    unit("Mi", "mebibyte", "mebibytes", false),
    unit("Gi", "gibibyte", "gibibytes", false),
    unit("Ti", "tebibyte", "tebibytes", false),
    unit("GFLOPS", "gigaflop", "gigaflops", true),
    unit("TFLOPS", "teraflop", "teraflops", true),
    unit("PFLOPS", "petaflop", "petaflops", true),
    unit("Kb", "kilobit", "kilobits", true),
    unit("Mb", "megabit", "megabits", true),
    unit("Gb", "gigabit", "gigabits", true),
    unit("kbps", "kilobit per second", "kilobits per second", true),
    unit("Mbps", "megabit per second", "megabits per second", true),
    unit("Gbps", "gigabit per second", "gigabits per second", true),
    unit("MB/s", "megabyte per second", "megabytes per second", true),
    unit("GB/s", "gigabyte per second", "gigabytes per second", true),
    unit("W", "watt", "watts", true),
    unit("kW", "kilowatt", "kilowatts", true),
    unit("MW", "megawatt", "megawatts", true),
    unit("GW", "gigawatt", "gigawatts", true),
    unit("kWh", "kilowatt hour", "kilowatt hours", true),
    unit("V", "volt", "volts", true),
    unit("mV", "millivolt", "millivolts", true),
    unit("kV", "kilovolt", "kilovolts", true),
    unit("mA", "milliamp", "milliamps", true),
    unit("mAh", "milliamp hour", "milliamp hours", true),
    unit("Wh", "watt hour", "watt hours", true),
    unit("MWh", "megawatt hour", "megawatt hours", true),
    unit("GWh", "gigawatt hour", "gigawatt hours", true),
    unit("TWh", "terawatt hour", "terawatt hours", true),
    unit("J", "joule", "joules", false),
    unit("kJ", "kilojoule", "kilojoules", true),
    unit("MJ", "megajoule", "megajoules", true),
    unit("kN", "kilonewton", "kilonewtons", true),
    unit("Nm", "newton meter", "newton meters", true),
    unit("hp", "horsepower", "horsepower", true),
    unit("bhp", "brake horsepower", "brake horsepower", true),
    unit("lb-ft", "pound-foot", "pound-feet", true),
    unit("ft-lb", "foot-pound", "foot-pounds", true),
    unit("ft-lbs", "foot-pound", "foot-pounds", true),
    unit("Pa", "pascal", "pascals", true),
    unit("hPa", "hectopascal", "hectopascals", true),
    unit("kPa", "kilopascal", "kilopascals", true),
    unit("mbar", "millibar", "millibars", true),
    unit("mpg", "mile per gallon", "miles per gallon", true),
    unit("cc", "C-C", "C-C", true),
    unit("ha", "hectare", "hectares", true),
    unit("kn", "knot", "knots", true),
    unit("kts", "knot", "knots", true),
    unit("nmi", "nautical mile", "nautical miles", true),
    unit("ly", "light-year", "light-years", true),
    unit("mcg", "microgram", "micrograms", true),
    unit("mmol", "millimole", "millimoles", true),
    unit("THz", "terahertz", "terahertz", true),
    unit("°C", "degree Celsius", "degrees Celsius", true),
    unit("°F", "degree Fahrenheit", "degrees Fahrenheit", true),
    unit("°", "degree", "degrees", true),
    unit("km/h", "kilometer per hour", "kilometers per hour", true),
    unit("kph", "kilometer per hour", "kilometers per hour", true),
    unit("mph", "mile per hour", "miles per hour", true),
    unit("m/s", "meter per second", "meters per second", true),
    unit(
        "mmHg",
        "millimeter of mercury",
        "millimeters of mercury",
        true,
    ),
    unit("inHg", "inch of mercury", "inches of mercury", true),
    unit(
        "rpm",
        "revolution per minute",
        "revolutions per minute",
        true,
    ),
    unit("fps", "frame per second", "frames per second", true),
    unit("bpm", "beat per minute", "beats per minute", true),
    unit("BPM", "beat per minute", "beats per minute", true),
    unit("dB", "decibel", "decibels", true),
    unit("px", "pixel", "pixels", true),
    unit("kcal", "kilocalorie", "kilocalories", true),
    unit("cal", "calorie", "calories", true),
    unit("tbsp", "tablespoon", "tablespoons", true),
    unit("Tbsp", "tablespoon", "tablespoons", true),
    unit("tsp", "teaspoon", "teaspoons", true),
    unit("wk", "week", "weeks", true),
    unit("wks", "week", "weeks", true),
    unit("mo", "month", "months", true),
    unit("mos", "month", "months", true),
    unit("yr", "year", "years", true),
    unit("yrs", "year", "years", true),
    unit("doz", "dozen", "dozen", true),
    // A listing's rooms, glued only ("a 3BR", "2BA"); "3BR/2BA" together is `numeric::rooms`.
    unit("BR", "bedroom", "bedrooms", false),
    unit("bd", "bedroom", "bedrooms", false),
    unit("bdrm", "bedroom", "bedrooms", false),
    unit("BA", "bathroom", "bathrooms", false),
    unit("ba", "bathroom", "bathrooms", false),
    unit("ppm", "part per million", "parts per million", true),
    unit("ppb", "part per billion", "parts per billion", true),
    // After a slash only ("2.7 L/day", "150 min/week"): a rate's time or share.
    unit("day", "day", "days", false),
    unit("week", "week", "weeks", false),
    unit("month", "month", "months", false),
    unit("year", "year", "years", false),
    unit("night", "night", "nights", false),
    unit("person", "person", "people", false),
    unit("serving", "serving", "servings", false),
    unit("x", "times", "times", false),
    unit("×", "times", "times", false),
];

/// The unit written `symbol`; `spaced` says whether it stood apart from the number.
pub(super) fn lookup(symbol: &str, spaced: bool) -> Option<&'static Unit> {
    // "μm" written with the Greek letter mu rather than the micro sign is the same unit.
    let micro;
    let symbol = if symbol.starts_with('μ') {
        micro = symbol.replacen('μ', "µ", 1);
        micro.as_str()
    } else {
        symbol
    };
    UNITS
        .iter()
        .find(|u| u.symbol == symbol && (u.spaced || !spaced))
}

/// The words of `symbol` after a number (`plural` unless the number is one): a unit, or two
/// joined by a slash ("mg/dL" is "milligrams per deciliter", "kg/m²" "kilograms per square
/// meter"); `spaced` as for [`lookup`] (the second unit may be any known one).
pub(super) fn phrase(symbol: &str, spaced: bool, plural: bool, dialect: Dialect) -> Option<String> {
    if let Some(unit) = lookup(symbol, spaced) {
        return Some(words(unit, plural, dialect));
    }
    let (top, bottom) = symbol.split_once('/')?;
    let factor = |u: &&Unit| matches!(u.symbol, "x" | "×");
    let top = lookup(top, spaced).filter(|u| !factor(u))?;
    let bottom = lookup(bottom, false).filter(|u| !factor(u))?;
    Some(format!(
        "{} per {}",
        words(top, plural, dialect),
        words(bottom, false, dialect)
    ))
}

/// Every unit's (plural, singular) words in the dialect's spelling.
pub(super) fn names(dialect: Dialect) -> Vec<(String, String)> {
    UNITS
        .iter()
        .filter(|u| u.many != u.one)
        .map(|u| (words(u, true, dialect), words(u, false, dialect)))
        .collect()
}

/// The unit's words, singular or plural, in the dialect's spelling.
pub(super) fn words(unit: &Unit, plural: bool, dialect: Dialect) -> String {
    let words = if plural { unit.many } else { unit.one };
    if dialect == Dialect::EnGb {
        words.replace("meter", "metre").replace("liter", "litre")
    } else {
        words.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_respects_spacing_and_case() {
        assert!(lookup("km", true).is_some());
        assert!(lookup("in", true).is_none());
        assert!(lookup("in", false).is_some());
        assert!(lookup("mb", false).is_none());
        let km = lookup("km", true).unwrap();
        assert_eq!(words(km, true, Dialect::EnGb), "kilometres");
        assert_eq!(words(km, false, Dialect::EnUs), "kilometer");
    }
}
