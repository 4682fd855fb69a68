//! The hosts a fleet summary names for one rule, shared by the text and
//! Markdown renderers.

use std::collections::HashSet;

/// Hosts a rule's row names before it counts the rest: one rule on 5,000
/// hosts would otherwise print a line of 50,000 characters.
pub(crate) const NAMED: usize = 8;

/// Hosts in order of first appearance, each once. The set beside the list
/// keeps gathering linear in findings on a fleet.
#[derive(Default)]
pub(crate) struct HostList {
    hosts: Vec<String>,
    seen: HashSet<String>,
}

impl HostList {
    /// Adds a host unless it is already listed.
    pub(crate) fn add(&mut self, host: &str) {
        if self.seen.insert(host.to_owned()) {
            self.hosts.push(host.to_owned());
        }
    }

    /// `-` when empty; else the hosts joined with `, `, cut after `limit`
    /// names with `, … and N more` (all of them with `None`). The flag says
    /// whether the list was cut.
    pub(crate) fn join(&self, limit: Option<usize>) -> (String, bool) {
        if self.hosts.is_empty() {
            return ("-".to_owned(), false);
        }
        match limit.and_then(|n| self.hosts.get(..n)) {
            Some(named) if named.len() < self.hosts.len() => (
                format!(
                    "{}, … and {} more",
                    named.join(", "),
                    self.hosts.len() - named.len()
                ),
                true,
            ),
            _ => (self.hosts.join(", "), false),
        }
    }
}

/// A paste of `hosts` pdsh-prefixed nodes (`node00`, `node01`, …), each with
/// one InfiniBand port down: IB001 on every host.
#[cfg(test)]
pub(crate) fn ports_down_on(hosts: usize) -> String {
    let mut text = String::new();
    for h in 0..hosts {
        for line in [
            "CA 'mlx5_0'",
            "\tCA type: MT4129",
            "\tPort 1:",
            "\t\tState: Down",
            "\t\tPhysical state: Polling",
            "\t\tLink layer: InfiniBand",
        ] {
            text.push_str(&format!("node{h:02}: {line}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_each_host_once_in_order_and_cuts_after_the_limit() {
        let mut list = HostList::default();
        for h in ["b", "a", "b", "c", "a"] {
            list.add(h);
        }
        assert_eq!(list.join(None), ("b, a, c".to_owned(), false));
        assert_eq!(list.join(Some(3)), ("b, a, c".to_owned(), false));
        assert_eq!(list.join(Some(2)), ("b, a, … and 1 more".to_owned(), true));
        assert_eq!(HostList::default().join(Some(2)), ("-".to_owned(), false));
    }
}
