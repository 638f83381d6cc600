//! Opaque identifiers. They are UUIDs rendered as text; parsing one from a path or a CLI
//! argument never panics and never accepts anything else.

use std::fmt;

use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Uuid);

        impl $name {
            /// A fresh, random identifier.
            pub fn new() -> Self {
                Self(Uuid::new_v4())
            }

            /// Parses the textual form; `None` for anything that is not a UUID.
            pub fn parse(s: &str) -> Option<Self> {
                Uuid::try_parse(s).ok().map(Self)
            }

            /// The UUID inside.
            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }
    };
}

uuid_id!(
    /// A user account: a web-app user or an agent-created account.
    UserId
);
uuid_id!(
    /// An organization (enterprise customer).
    OrgId
);
uuid_id!(
    /// An API key record (never the key itself).
    KeyId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let id = UserId::new();
        assert_eq!(UserId::parse(&id.to_string()), Some(id));
        assert_eq!(UserId::parse("not-a-uuid"), None);
        assert_eq!(UserId::parse(""), None);
    }
}
