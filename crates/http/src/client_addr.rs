//! The client's address. Behind a proxy the connection's peer is the proxy, so the address
//! a cooldown keys on and the logs show comes from `Forwarded` (RFC 7239) or
//! `X-Forwarded-For`, but only when the peer is one of `REDLINE_TRUSTED_PROXIES`: from
//! anyone else those headers are whatever the client wrote. The chain is read from the
//! right, skipping the trusted proxies; the first address that is not one is the client.

use std::net::{IpAddr, SocketAddr};

use actix_web::http::header::HeaderMap;
use ipnet::IpNet;

/// The proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// CIDRs (`10.0.0.0/8`, `fd00::/8`) or single addresses, separated by commas or spaces.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut nets = Vec::new();
        for item in list.split([',', ' ']).map(str::trim).filter(|s| !s.is_empty()) {
            let net = match item.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => item.parse::<IpAddr>().map(IpNet::from).map_err(|_| {
                    format!("{item:?} is neither an address nor a CIDR range (e.g. 10.0.0.0/8 or 127.0.0.1)")
                })?,
            };
            nets.push(net.trunc());
        }
        Ok(Self(nets))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client's address: the peer's, unless the peer is a trusted proxy and the request
    /// names the address it forwards for.
    pub fn client(&self, peer: Option<SocketAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = canonical(peer?.ip());
        if !self.trusts(peer) {
            return Some(peer);
        }
        let chain = forwarded_chain(headers);
        let mut client = peer;
        for hop in chain.iter().rev() {
            // A hop that does not parse (`unknown`, an obfuscated name) ends the walk: what
            // lies left of it was written by someone not trusted to write it.
            let Some(ip) = hop else { break };
            client = *ip;
            if !self.trusts(*ip) {
                break;
            }
        }
        Some(client)
    }
}

impl std::fmt::Display for TrustedProxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&list.join(","))
    }
}

/// IPv4 addresses mapped into IPv6 (`::ffff:a.b.c.d`, as a dual-stack socket reports them)
/// compare as IPv4.
/// The client's address of a request as the abuse brakes key on it (`unknown` when the
/// connection has none, as in some tests).
pub fn of(req: &actix_web::HttpRequest, trusted: &TrustedProxies) -> String {
    trusted.client(req.peer_addr(), req.headers()).map_or_else(|| "unknown".to_owned(), |ip| ip.to_string())
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The addresses a request says it was forwarded for, client first: `Forwarded`'s `for=`
/// when that header is present, else `X-Forwarded-For`. `None` for a hop that is not an
/// address.
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let joined = |name: &str| headers.get_all(name).filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join(",");
    let forwarded = joined("forwarded");
    if !forwarded.trim().is_empty() {
        return forwarded
            .split(',')
            .map(|element| {
                element.split(';').find_map(|pair| {
                    let (name, value) = pair.split_once('=')?;
                    name.trim().eq_ignore_ascii_case("for").then(|| node_address(value.trim().trim_matches('"')))
                })?
            })
            .collect();
    }
    joined("x-forwarded-for").split(',').map(str::trim).filter(|s| !s.is_empty()).map(node_address).collect()
}

/// `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`, `[2001:db8::1]:4711` or `2001:db8::1`.
fn node_address(node: &str) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok().map(canonical);
    }
    if let Ok(ip) = node.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    node.parse::<SocketAddr>().ok().map(|s| canonical(s.ip()))
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::{HeaderName, HeaderValue};

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn peer(ip: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(ip.parse().unwrap(), 40000))
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn untrusted_peers_are_taken_as_they_are() {
        let none = TrustedProxies::default();
        let spoof = headers(&[("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=5.6.7.8")]);
        assert_eq!(none.client(peer("203.0.113.9"), &spoof), ip("203.0.113.9"));
        let lb = TrustedProxies::parse("10.0.0.0/8").unwrap();
        assert_eq!(lb.client(peer("203.0.113.9"), &spoof), ip("203.0.113.9"), "not from the proxy");
        assert_eq!(lb.client(None, &spoof), None);
    }

    #[test]
    fn the_first_untrusted_hop_from_the_right_is_the_client() {
        let proxies = TrustedProxies::parse("10.0.0.0/8, 192.168.1.1 fd00::/8").unwrap();
        let xff = headers(&[("x-forwarded-for", "6.6.6.6, 198.51.100.7, 10.1.2.3")]);
        // 6.6.6.6 was written by the client itself; 198.51.100.7 is who reached our proxies.
        assert_eq!(proxies.client(peer("10.0.0.2"), &xff), ip("198.51.100.7"));
        let two_lines = headers(&[("x-forwarded-for", "198.51.100.7"), ("x-forwarded-for", "192.168.1.1")]);
        assert_eq!(proxies.client(peer("10.0.0.2"), &two_lines), ip("198.51.100.7"));
        // Only trusted hops: the leftmost.
        let inside = headers(&[("x-forwarded-for", "10.9.9.9, 10.1.1.1")]);
        assert_eq!(proxies.client(peer("10.0.0.2"), &inside), ip("10.9.9.9"));
        // No header: the proxy itself.
        assert_eq!(proxies.client(peer("10.0.0.2"), &HeaderMap::new()), ip("10.0.0.2"));
        // IPv4 seen through a dual-stack socket.
        assert_eq!(proxies.client(peer("::ffff:10.0.0.2"), &xff), ip("198.51.100.7"));
    }

    #[test]
    fn forwarded_wins_over_x_forwarded_for_and_is_parsed_per_rfc_7239() {
        let proxies = TrustedProxies::parse("10.0.0.0/8,fd00::/8").unwrap();
        let both = headers(&[
            ("forwarded", r#"for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.5;by=10.0.0.1"#),
            ("x-forwarded-for", "9.9.9.9"),
        ]);
        assert_eq!(proxies.client(peer("10.0.0.2"), &both), ip("2001:db8:cafe::17"));
        let port = headers(&[("forwarded", "For=192.0.2.60:8080")]);
        assert_eq!(proxies.client(peer("fd00::1"), &port), ip("192.0.2.60"));
        // An obfuscated hop ends the walk at the last trusted address.
        let hidden = headers(&[("forwarded", "for=192.0.2.60, for=_hidden, for=10.0.0.7")]);
        assert_eq!(proxies.client(peer("10.0.0.2"), &hidden), ip("10.0.0.7"));
    }

    #[test]
    fn bad_lists_are_refused() {
        assert!(TrustedProxies::parse("").unwrap().is_empty());
        let err = TrustedProxies::parse("10.0.0.0/8, lb.internal").unwrap_err();
        assert!(err.contains("lb.internal"), "{err}");
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
    }
}
