//! Which environment variables a service's configuration reads, derived
//! from the configuration types themselves: their `Deserialize` impls are
//! driven by a deserializer that answers every request with a placeholder
//! and records the path of each value asked for. Deployment files are
//! checked against this list (`couler-api env-vars`, `couler-scheduler
//! env-vars`), so it cannot drift from the code.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use std::cell::RefCell;
use std::collections::BTreeSet;

/// Variables read as whole config values besides `COULER__…`: the usual
/// shorthands, and the key each one sets ([`crate::load_config`] reads them).
pub const SHORTHANDS: &[(&str, &str)] =
    &[("DATABASE_URL", "database.url"), ("REDIS_URL", "redis.url")];

/// Deeper optional values are taken to be absent.
const MAX_DEPTH: usize = 8;

/// Stands for a key chosen by the operator (a map's key, such as a secrets
/// key id) in the names [`env_vars`] lists.
pub const ANY_KEY: &str = "<KEY>";

/// Every environment variable that sets a value of `T`, as
/// `COULER__SECTION__KEY` (upper case; [`ANY_KEY`] where the operator names
/// the key), for the top-level `sections` the service reads, plus the
/// [`SHORTHANDS`]. Sorted.
pub fn env_vars<T: de::DeserializeOwned>(sections: &[&str]) -> Result<Vec<String>, TraceError> {
    let leaves = RefCell::new(BTreeSet::new());
    T::deserialize(Tracer {
        path: Vec::new(),
        leaves: &leaves,
    })?;
    let mut names: BTreeSet<String> = leaves
        .into_inner()
        .into_iter()
        .filter(|path| path.first().is_some_and(|s| sections.contains(&s.as_str())))
        .map(|path| {
            let keys: Vec<String> = path
                .iter()
                .map(|k| match k.as_str() {
                    ANY_KEY => ANY_KEY.to_owned(),
                    k => k.to_ascii_uppercase(),
                })
                .collect();
            format!("COULER__{}", keys.join("__"))
        })
        .collect();
    names.extend(SHORTHANDS.iter().map(|(name, _)| name.to_string()));
    Ok(names.into_iter().collect())
}

/// What a service binary prints for `env-vars`: its configuration's
/// variables ([`env_vars`]) and those its command line reads (`--config`'s
/// `COULER_CONFIG`, …), one per line.
pub fn listing(config: Vec<String>, cli: &clap::Command) -> String {
    fn walk(cmd: &clap::Command, out: &mut BTreeSet<String>) {
        for arg in cmd.get_arguments() {
            if let Some(env) = arg.get_env() {
                out.insert(env.to_string_lossy().into_owned());
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, out);
        }
    }
    let mut names: BTreeSet<String> = config.into_iter().collect();
    walk(cli, &mut names);
    names.into_iter().map(|n| n + "\n").collect()
}

/// Whether `name` (a variable a deployment sets) is one of `listed`
/// ([`env_vars`]' names, where [`ANY_KEY`] matches one key of letters,
/// digits, `-`, `_` or `.`).
pub fn env_var_listed(listed: &[String], name: &str) -> bool {
    listed
        .iter()
        .any(|pattern| match pattern.split_once(ANY_KEY) {
            None => pattern == name,
            Some((head, tail)) => name
                .strip_prefix(head)
                .and_then(|rest| rest.strip_suffix(tail))
                .is_some_and(|key| {
                    !key.is_empty()
                        && !key.contains("__")
                        && key
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
                }),
        })
}

#[derive(Debug, thiserror::Error)]
#[error("tracing the configuration failed: {0}")]
pub struct TraceError(String);

impl de::Error for TraceError {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        TraceError(msg.to_string())
    }
}

/// Records the path of every value asked for: structs name their fields,
/// maps get one [`ANY_KEY`] entry, everything else is a leaf.
struct Tracer<'a> {
    path: Vec<String>,
    leaves: &'a RefCell<BTreeSet<Vec<String>>>,
}

impl<'a> Tracer<'a> {
    fn child(&self, key: &str) -> Tracer<'a> {
        let mut path = self.path.clone();
        path.push(key.to_owned());
        Tracer {
            path,
            leaves: self.leaves,
        }
    }

    fn leaf(&self) {
        if !self.path.is_empty() {
            self.leaves.borrow_mut().insert(self.path.clone());
        }
    }
}

macro_rules! leaf {
    ($($method:ident => $visit:ident($($value:expr)?)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
            self.leaf();
            visitor.$visit($($value)?)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Tracer<'_> {
    type Error = TraceError;

    leaf! {
        deserialize_bool => visit_bool(false),
        deserialize_i8 => visit_i8(0),
        deserialize_i16 => visit_i16(0),
        deserialize_i32 => visit_i32(0),
        deserialize_i64 => visit_i64(0),
        deserialize_u8 => visit_u8(0),
        deserialize_u16 => visit_u16(0),
        deserialize_u32 => visit_u32(0),
        deserialize_u64 => visit_u64(0),
        deserialize_f32 => visit_f32(0.0),
        deserialize_f64 => visit_f64(0.0),
        deserialize_char => visit_char('x'),
        deserialize_str => visit_str(""),
        deserialize_string => visit_str(""),
        deserialize_bytes => visit_bytes(&[]),
        deserialize_byte_buf => visit_bytes(&[]),
        deserialize_unit => visit_unit(),
        deserialize_identifier => visit_str(""),
        deserialize_any => visit_unit(),
        deserialize_ignored_any => visit_unit(),
    }

    /// Present, unless the path is implausibly deep (a type that holds
    /// itself).
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        match self.path.len() < MAX_DEPTH {
            true => visitor.visit_some(self),
            false => visitor.visit_none(),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        visitor.visit_newtype_struct(self)
    }

    /// A list is one value (a TOML array in one variable).
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        self.leaf();
        visitor.visit_seq(de::value::SeqDeserializer::<_, TraceError>::new(
            std::iter::empty::<()>(),
        ))
    }

    /// Fixed-size values (`SocketAddr` outside human-readable formats):
    /// one leaf, its parts placeholders.
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.leaf();
        visitor.visit_seq(Parts {
            tracer: self,
            left: len,
        })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        visitor.visit_map(Entries {
            tracer: self,
            fields: &[ANY_KEY],
            next: 0,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        visitor.visit_map(Entries {
            tracer: self,
            fields,
            next: 0,
        })
    }

    /// The first variant stands for all: the enum is one value.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        self.leaf();
        let variant = variants.first().copied().unwrap_or_default();
        visitor.visit_enum(Variant {
            tracer: self,
            variant,
        })
    }

    /// Addresses and the like come as their compact forms: a placeholder
    /// string would not parse as one.
    fn is_human_readable(&self) -> bool {
        false
    }
}

struct Entries<'a> {
    tracer: Tracer<'a>,
    fields: &'static [&'static str],
    next: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_> {
    type Error = TraceError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TraceError> {
        let Some(field) = self.fields.get(self.next) else {
            return Ok(None);
        };
        let key: de::value::StrDeserializer<'_, TraceError> = field.into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, TraceError> {
        let field = self.fields[self.next];
        self.next += 1;
        seed.deserialize(self.tracer.child(field))
    }
}

struct Parts<'a> {
    tracer: Tracer<'a>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Parts<'_> {
    type Error = TraceError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, TraceError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(Tracer {
            path: self.tracer.path.clone(),
            leaves: self.tracer.leaves,
        })
        .map(Some)
    }
}

struct Variant<'a> {
    tracer: Tracer<'a>,
    variant: &'static str,
}

impl<'de, 'a> de::EnumAccess<'de> for Variant<'a> {
    type Error = TraceError;
    type Variant = Tracer<'a>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Tracer<'a>), TraceError> {
        let name: de::value::StrDeserializer<'_, TraceError> = self.variant.into_deserializer();
        Ok((seed.deserialize(name)?, self.tracer))
    }
}

impl<'de> de::VariantAccess<'de> for Tracer<'_> {
    type Error = TraceError;

    fn unit_variant(self) -> Result<(), TraceError> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, TraceError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        de::Deserializer::deserialize_tuple(self, len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;
    use std::net::SocketAddr;
    use std::path::PathBuf;

    #[derive(Deserialize, Default)]
    #[serde(default, deny_unknown_fields)]
    #[allow(dead_code)] // only traced
    struct Config {
        http: Http,
        keys: Keys,
        engine: Option<Engine>,
        ignored: u32,
    }

    #[derive(Deserialize)]
    #[serde(default, deny_unknown_fields)]
    #[allow(dead_code)]
    struct Http {
        addr: SocketAddr,
        origins: Vec<String>,
    }

    impl Default for Http {
        fn default() -> Self {
            Http {
                addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
                origins: Vec::new(),
            }
        }
    }

    #[derive(Deserialize, Default)]
    #[serde(default, deny_unknown_fields)]
    #[allow(dead_code)]
    struct Keys {
        keys: BTreeMap<String, String>,
        active_key: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    #[allow(dead_code)]
    enum Mode {
        KubernetesPod,
        Bash,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Engine {
        base_url: String,
        dags_folder: PathBuf,
        mode: Mode,
        pods: Option<Pods>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Pods {
        namespace: String,
        mode: Mode,
    }

    #[test]
    fn every_value_of_the_read_sections_is_listed() {
        let names = env_vars::<Config>(&["http", "keys", "engine"]).unwrap();
        for name in [
            "COULER__HTTP__ADDR",
            "COULER__HTTP__ORIGINS",
            "COULER__KEYS__KEYS__<KEY>",
            "COULER__KEYS__ACTIVE_KEY",
            "COULER__ENGINE__BASE_URL",
            "COULER__ENGINE__DAGS_FOLDER",
            "COULER__ENGINE__MODE",
            "COULER__ENGINE__PODS__MODE",
            "DATABASE_URL",
            "REDIS_URL",
        ] {
            assert!(
                names.iter().any(|n| n == name),
                "{name} missing from {names:?}"
            );
        }
        assert!(!names.iter().any(|n| n.contains("IGNORED")), "{names:?}");
    }

    #[test]
    fn operator_keys_match_one_component() {
        let listed = vec![
            "COULER__KEYS__KEYS__<KEY>".to_owned(),
            "REDIS_URL".to_owned(),
        ];
        assert!(env_var_listed(&listed, "COULER__KEYS__KEYS__LAPTOP"));
        assert!(env_var_listed(&listed, "REDIS_URL"));
        assert!(!env_var_listed(&listed, "COULER__KEYS__KEYS__"));
        assert!(!env_var_listed(&listed, "COULER__KEYS__KEYS__A__B"));
        assert!(!env_var_listed(&listed, "COULER__KEYS__ACTIVE"));
    }
}
