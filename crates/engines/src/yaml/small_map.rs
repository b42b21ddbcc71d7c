//! A map with a few entries, kept as a sorted list.

use serde::ser::{Serialize, Serializer};

/// String keys in order, as a `BTreeMap` keeps them, for the many maps of
/// a manifest that hold one to a handful of entries. A `BTreeMap` takes a
/// node for eleven entries on its first insert, which a 10,000-step
/// compile pays tens of thousands of times in fresh memory. An insert out
/// of order shifts the entries after it: fine up to a few hundred.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallMap<V>(Vec<(String, V)>);

impl<V> Default for SmallMap<V> {
    fn default() -> Self {
        SmallMap(Vec::new())
    }
}

impl<V> SmallMap<V> {
    /// Inserts or replaces; returns the value replaced.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        if self.0.last().is_none_or(|(last, _)| *last < key) {
            self.0.push((key, value));
            return None;
        }
        match self.0.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<V> FromIterator<(String, V)> for SmallMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(entries: I) -> Self {
        let mut map = SmallMap::default();
        for (k, v) in entries {
            map.insert(k, v);
        }
        map
    }
}

impl<V: Serialize> Serialize for SmallMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::SmallMap;

    #[test]
    fn keeps_keys_sorted_and_unique() {
        let mut map: SmallMap<u32> = [("b".to_owned(), 1), ("a".to_owned(), 2)]
            .into_iter()
            .collect();
        assert_eq!(map.insert("b".into(), 3), Some(1));
        assert_eq!(map.insert("c".into(), 4), None);
        let entries: Vec<(&String, &u32)> = map.iter().collect();
        assert_eq!(
            entries,
            [(&"a".into(), &2), (&"b".into(), &3), (&"c".into(), &4)]
        );
        assert_eq!(crate::yaml::to_string(&map).unwrap(), "a: 2\nb: 3\nc: 4\n");
    }
}
