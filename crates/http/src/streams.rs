//! Caps on open event streams (docs/api.md, "Event streams"): at most so many at once per
//! credential (an API key, or a web-app user's sessions) and per client address, on each
//! replica. A stream holds its [`Slot`] until it ends; a client that went away frees it at
//! the stream's next write (a heartbeat at the latest).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The open streams of one replica, counted per credential and per address.
#[derive(Debug)]
pub struct StreamSlots {
    per_credential: usize,
    per_address: usize,
    open: Mutex<HashMap<String, usize>>,
}

/// Why a stream was refused: which cap is full, and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    Credential(usize),
    Address(usize),
}

/// One open stream; dropping it frees the place.
#[derive(Debug)]
pub struct Slot {
    slots: Arc<StreamSlots>,
    keys: [String; 2],
}

impl StreamSlots {
    pub fn new(per_credential: usize, per_address: usize) -> Self {
        Self { per_credential, per_address, open: Mutex::new(HashMap::new()) }
    }

    /// Takes a place for a stream of `credential` from `address`, or says which cap is full.
    pub fn take(self: &Arc<Self>, credential: &str, address: &str) -> Result<Slot, Full> {
        let keys = [format!("c:{credential}"), format!("a:{address}")];
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.get(&keys[0]).copied().unwrap_or(0) >= self.per_credential {
            return Err(Full::Credential(self.per_credential));
        }
        if open.get(&keys[1]).copied().unwrap_or(0) >= self.per_address {
            return Err(Full::Address(self.per_address));
        }
        for k in &keys {
            *open.entry(k.clone()).or_default() += 1;
        }
        Ok(Slot { slots: self.clone(), keys })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|p| p.into_inner());
        for k in &self.keys {
            if let Some(n) = open.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    open.remove(k);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_per_credential_and_address_and_freed_on_drop() {
        let slots = Arc::new(StreamSlots::new(2, 3));
        let a1 = slots.take("key-a", "10.0.0.1").unwrap();
        let _a2 = slots.take("key-a", "10.0.0.1").unwrap();
        assert_eq!(slots.take("key-a", "10.0.0.2").unwrap_err(), Full::Credential(2));
        let _b1 = slots.take("key-b", "10.0.0.1").unwrap();
        assert_eq!(slots.take("key-c", "10.0.0.1").unwrap_err(), Full::Address(3));
        drop(a1);
        let _a3 = slots.take("key-a", "10.0.0.2").unwrap();
        assert_eq!(slots.open.lock().unwrap().len(), 4);
    }
}
