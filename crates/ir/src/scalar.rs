//! Scalar newtypes with one canonical spelling each, so that `30m` and
//! `1800s`, or `0.5` and `500m` CPU, hash the same.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// A parameter value. Engines pass parameters as strings, so numbers and
/// booleans are accepted and kept in their textual form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamValue(pub String);

impl ParamValue {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for ParamValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ParamValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ParamValue, E> {
                Ok(ParamValue(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ParamValue, E> {
                Ok(ParamValue(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ParamValue, E> {
                Ok(ParamValue(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamValue, E> {
                Ok(ParamValue(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
                Ok(ParamValue(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamValue, E> {
                Ok(ParamValue(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for ParamValue {
    fn schema_name() -> Cow<'static, str> {
        "ParamValue".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A parameter value; numbers and booleans are kept as their text.",
            "type": ["string", "number", "boolean"]
        })
    }
}

/// Deserializes a string-or-number through `parse`, reporting its error.
fn string_or_number<'de, D, T>(
    d: D,
    expecting: &'static str,
    parse: fn(&str) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct V<T> {
        expecting: &'static str,
        parse: fn(&str) -> Result<T, String>,
    }
    impl<T> Visitor<'_> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            (self.parse)(v).map_err(E::custom)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
            (self.parse)(&v.to_string()).map_err(E::custom)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
            (self.parse)(&v.to_string()).map_err(E::custom)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
            (self.parse)(&v.to_string()).map_err(E::custom)
        }
    }
    d.deserialize_any(V { expecting, parse })
}

/// A span of time: `"90s"`, `"30m"`, `"1h 30m"`, `"7d"` or whole seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Duration(pub std::time::Duration);

impl Duration {
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Ok(secs) = s.parse::<u64>() {
            return Ok(Duration(std::time::Duration::from_secs(secs)));
        }
        humantime::parse_duration(s).map(Duration).map_err(|e| {
            format!("invalid duration {s:?} ({e}); use e.g. \"90s\", \"30m\", \"1h 30m\"")
        })
    }
    pub fn as_std(self) -> std::time::Duration {
        self.0
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_duration(self.0))
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        string_or_number(
            d,
            "a duration such as \"30m\" or whole seconds",
            Duration::parse,
        )
    }
}

impl JsonSchema for Duration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration such as \"90s\", \"30m\", \"1h 30m\", \"7d\", or whole seconds.",
            "type": ["string", "integer"],
            "pattern": "^\\s*([0-9]+(\\.[0-9]+)?\\s*(ns|us|ms|s|sec|m|min|h|hr|d|day|days|w|week|weeks)?\\s*)+$",
            "minimum": 0
        })
    }
}

/// CPU in millicores: `"500m"`, `"2"`, `0.5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cpu(pub u64);

impl Cpu {
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let err = || {
            format!(
                "invalid CPU quantity {s:?}; use cores (\"2\", \"0.5\") or millicores (\"500m\")"
            )
        };
        if let Some(m) = s.strip_suffix('m') {
            return m.parse::<u64>().map(Cpu).map_err(|_| err());
        }
        let cores: f64 = s.parse().map_err(|_| err())?;
        if !cores.is_finite() || !(0.0..=1e9).contains(&cores) {
            return Err(err());
        }
        Ok(Cpu((cores * 1000.0).round() as u64))
    }
    pub fn millis(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Cpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_multiple_of(1000) {
            write!(f, "{}", self.0 / 1000)
        } else {
            write!(f, "{}m", self.0)
        }
    }
}

impl Serialize for Cpu {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Cpu {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        string_or_number(d, "a CPU quantity such as \"2\" or \"500m\"", Cpu::parse)
    }
}

impl JsonSchema for Cpu {
    fn schema_name() -> Cow<'static, str> {
        "Cpu".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "CPU as cores (\"2\", 0.5) or millicores (\"500m\").",
            "type": ["string", "number"],
            "pattern": "^[0-9]+(\\.[0-9]+)?m?$"
        })
    }
}

/// Memory in bytes: `"512Mi"`, `"4Gi"`, `"1G"`, `1073741824`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Memory(pub u64);

const BINARY: [(&str, u64); 5] = [
    ("Pi", 1 << 50),
    ("Ti", 1 << 40),
    ("Gi", 1 << 30),
    ("Mi", 1 << 20),
    ("Ki", 1 << 10),
];
const DECIMAL: [(&str, u64); 5] = [
    ("P", 1_000_000_000_000_000),
    ("T", 1_000_000_000_000),
    ("G", 1_000_000_000),
    ("M", 1_000_000),
    ("k", 1_000),
];

impl Memory {
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let err = || {
            format!("invalid memory quantity {s:?}; use e.g. \"512Mi\", \"4Gi\", \"1G\" or bytes")
        };
        let (number, factor) = BINARY
            .iter()
            .chain(DECIMAL.iter())
            .find_map(|(suffix, f)| s.strip_suffix(suffix).map(|n| (n, *f)))
            .unwrap_or((s, 1));
        let value: f64 = number.parse().map_err(|_| err())?;
        let bytes = value * factor as f64;
        if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
            return Err(err());
        }
        Ok(Memory(bytes.round() as u64))
    }
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (suffix, factor) in BINARY {
            if self.0 != 0 && self.0.is_multiple_of(factor) {
                return write!(f, "{}{suffix}", self.0 / factor);
            }
        }
        write!(f, "{}", self.0)
    }
}

impl Serialize for Memory {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Memory {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        string_or_number(d, "a memory quantity such as \"4Gi\"", Memory::parse)
    }
}

impl JsonSchema for Memory {
    fn schema_name() -> Cow<'static, str> {
        "Memory".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Memory in bytes or with a suffix: Ki, Mi, Gi, Ti, Pi (binary) or k, M, G, T, P (decimal).",
            "type": ["string", "integer"],
            "pattern": "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$"
        })
    }
}

/// Whole numbers for counts and limits. JSON and YAML writers (Python's
/// `json`, for one) often spell them `3.0`, and JSON Schema's `integer`
/// accepts that, so the parser does too: any number without a fractional part
/// that fits the field. `3.5`, strings and out-of-range values are refused.
/// The API reads its own whole-number fields through this too.
pub mod whole {
    use serde::de::{self, Deserializer, Visitor};
    use std::fmt;
    use std::marker::PhantomData;

    /// The integer types such fields have, with their range.
    pub trait Whole: TryFrom<i128> {
        const MIN: i128;
        const MAX: i128;
    }
    macro_rules! whole {
        ($($t:ty),*) => {$(
            impl Whole for $t {
                const MIN: i128 = <$t>::MIN as i128;
                const MAX: i128 = <$t>::MAX as i128;
            }
        )*};
    }
    whole!(u32, u64, i32, i64);

    pub fn deserialize<'de, D: Deserializer<'de>, T: Whole>(d: D) -> Result<T, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<T: Whole> V<T> {
            fn fit<E: de::Error>(&self, v: i128, shown: de::Unexpected) -> Result<T, E> {
                T::try_from(v).map_err(|_| E::invalid_value(shown, self))
            }
        }
        impl<T: Whole> Visitor<'_> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a whole number from {} to {}", T::MIN, T::MAX)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
                self.fit(v.into(), de::Unexpected::Unsigned(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
                self.fit(v.into(), de::Unexpected::Signed(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
                // Exactly representable up to 2^53; beyond that a float no
                // longer names one whole number.
                const EXACT: f64 = 9_007_199_254_740_992.0;
                if v.fract() != 0.0 || !(-EXACT..=EXACT).contains(&v) {
                    return Err(E::invalid_value(de::Unexpected::Float(v), &self));
                }
                self.fit(v as i128, de::Unexpected::Float(v))
            }
        }
        d.deserialize_any(V(PhantomData))
    }

    /// For `Option` fields (with `#[serde(default)]` for a missing one); a
    /// `null` is none.
    pub fn opt<'de, D: Deserializer<'de>, T: Whole>(d: D) -> Result<Option<T>, D::Error> {
        struct Maybe<T>(PhantomData<T>);
        impl<'de, T: Whole> Visitor<'de> for Maybe<T> {
            type Value = Option<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a whole number from {} to {}, or null", T::MIN, T::MAX)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                deserialize(d).map(Some)
            }
        }
        d.deserialize_option(Maybe(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Counts {
        #[serde(deserialize_with = "whole::deserialize")]
        limit: u32,
        #[serde(default, deserialize_with = "whole::opt")]
        seed: Option<u64>,
    }

    #[test]
    fn whole_numbers_may_be_written_as_integral_floats() {
        let parse = |s: &str| serde_json::from_str::<Counts>(s).map_err(|e| e.to_string());
        let counts = parse(r#"{"limit": 3.0, "seed": 7}"#).unwrap();
        assert_eq!((counts.limit, counts.seed), (3, Some(7)));
        assert_eq!(parse(r#"{"limit": 3}"#).unwrap().seed, None);
        for bad in [
            r#"{"limit": 3.5}"#,
            r#"{"limit": -1}"#,
            r#"{"limit": -1.0}"#,
            r#"{"limit": 4294967296}"#,
            r#"{"limit": 1e300}"#,
            r#"{"limit": "3"}"#,
        ] {
            let e = parse(bad).unwrap_err();
            assert!(
                e.contains("a whole number from 0 to 4294967295"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn durations_have_one_spelling() {
        assert_eq!(
            Duration::parse("30m").unwrap(),
            Duration::parse("1800").unwrap()
        );
        assert_eq!(Duration::parse("1h 30m").unwrap().to_string(), "1h 30m");
        assert_eq!(Duration::parse("90s").unwrap().to_string(), "1m 30s");
        assert!(Duration::parse("soon").is_err());
    }

    #[test]
    fn cpu_quantities() {
        assert_eq!(Cpu::parse("500m").unwrap(), Cpu(500));
        assert_eq!(Cpu::parse("0.5").unwrap(), Cpu(500));
        assert_eq!(Cpu::parse("2").unwrap().to_string(), "2");
        assert_eq!(Cpu(250).to_string(), "250m");
        assert!(Cpu::parse("two").is_err());
        assert!(Cpu::parse("-1").is_err());
    }

    #[test]
    fn memory_quantities() {
        assert_eq!(Memory::parse("4Gi").unwrap(), Memory(4 << 30));
        assert_eq!(Memory::parse("1G").unwrap(), Memory(1_000_000_000));
        assert_eq!(Memory::parse("1.5Gi").unwrap().to_string(), "1536Mi");
        assert_eq!(Memory::parse("4096Mi").unwrap().to_string(), "4Gi");
        assert!(Memory::parse("lots").is_err());
    }
}
