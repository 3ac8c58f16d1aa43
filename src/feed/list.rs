//! [`List`]: a vector whose cleared elements stay allocated for the next item, so a
//! feed of any length is read with the allocations of its first few items.

use std::ops::Deref;

/// A vector that keeps its elements' allocations across [`List::clear`]. Reads go
/// through `Deref<Target = [T]>`, so it is used like a slice.
#[derive(Debug, Clone)]
pub struct List<T> {
    items: Vec<T>,
    len: usize,
}

impl<T> Default for List<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Deref for List<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items[..self.len]
    }
}

impl<'a, T> IntoIterator for &'a List<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> List<T> {
    /// The live elements.
    pub fn as_slice(&self) -> &[T] {
        self
    }

    /// Empties the list, keeping the elements for reuse.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `value` (replacing a kept element, if any).
    pub fn push(&mut self, value: T) {
        if self.len < self.items.len() {
            self.items[self.len] = value;
        } else {
            self.items.push(value);
        }
        self.len += 1;
    }

    /// Appends an element and returns it: a kept one (with its old contents, which the
    /// caller overwrites, reusing their allocations) or a new one from `make`.
    pub fn push_reused(&mut self, make: impl FnOnce() -> T) -> &mut T {
        if self.len == self.items.len() {
            self.items.push(make());
        }
        self.len += 1;
        &mut self.items[self.len - 1]
    }

    /// The last element.
    pub fn last_mut(&mut self) -> Option<&mut T> {
        self.items[..self.len].last_mut()
    }

    /// The element at `i`.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items[..self.len].get_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::List;

    #[test]
    fn cleared_elements_are_reused_and_hidden() {
        let mut l: List<String> = List::default();
        l.push("a".into());
        l.push_reused(String::new).push('b');
        assert_eq!(&*l, ["a", "b"]);
        l.clear();
        assert!(l.is_empty());
        let s = l.push_reused(String::new);
        assert_eq!(
            s, "a",
            "the kept element comes back for the caller to overwrite"
        );
        s.clear();
        s.push('c');
        assert_eq!(&*l, ["c"]);
    }
}
