//! Who owns sessions, jobs, usage and keys: a user or an organization.

use std::fmt;

use crate::ids::{OrgId, UserId};

/// The owner of every resource. Two owners may use the same session id without seeing each
/// other's data; every lookup is scoped by owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    User(UserId),
    Org(OrgId),
}

impl Owner {
    /// The storage form: `user:<uuid>` or `org:<uuid>`.
    pub fn parse(s: &str) -> Option<Self> {
        let (kind, id) = s.split_once(':')?;
        match kind {
            "user" => UserId::parse(id).map(Owner::User),
            "org" => OrgId::parse(id).map(Owner::Org),
            _ => None,
        }
    }

    pub fn user_id(&self) -> Option<UserId> {
        match self {
            Owner::User(id) => Some(*id),
            Owner::Org(_) => None,
        }
    }

    pub fn org_id(&self) -> Option<OrgId> {
        match self {
            Owner::Org(id) => Some(*id),
            Owner::User(_) => None,
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owner::User(id) => write!(f, "user:{id}"),
            Owner::Org(id) => write!(f, "org:{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_form_round_trips() {
        for owner in [Owner::User(UserId::new()), Owner::Org(OrgId::new())] {
            assert_eq!(Owner::parse(&owner.to_string()), Some(owner));
        }
        assert_eq!(Owner::parse("team:123"), None);
        assert_eq!(Owner::parse("user"), None);
        assert_eq!(Owner::parse("user:nope"), None);
    }
}
