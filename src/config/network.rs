//! Who the client is and how often it may ask: rate limits, and which
//! `X-Forwarded-For` hops are the server's own proxies.

use std::time::Duration;

/// A limit of `limit` requests per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed in one window.
    pub limit: u32,
    /// Length of the window.
    pub window: Duration,
}

/// Rate limits on the account and room endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Login attempts per client address.
    pub login_per_address: RateLimit,
    /// Failed logins per username from one client address; past it that
    /// address waits for the window, whatever the password.
    pub login_per_username: RateLimit,
    /// Failed logins per username from every address together; past it only
    /// addresses with no failure for that name in the window may try.
    pub login_ceiling_per_username: RateLimit,
    /// Registrations per client address.
    pub register_per_address: RateLimit,
    /// Room look-ups and joins (`/rooms/{code}`) per player.
    pub room_lookups_per_player: RateLimit,
    /// Room look-ups and joins per client address.
    pub room_lookups_per_address: RateLimit,
}

/// Which `X-Forwarded-For` hops are the server's own proxies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyTrust {
    /// `X-Forwarded-For` is ignored: the client is the peer (`UTTT_TRUST_PROXY=false`).
    None,
    /// This many proxies stand in front of the server (`UTTT_TRUSTED_PROXY_HOPS`):
    /// the client is the address the outermost one appended.
    Hops(usize),
    /// Proxies at these addresses (`UTTT_TRUSTED_PROXIES`): the client is the
    /// rightmost hop that is not one of them.
    Addresses(Vec<IpNet>),
}

/// An IP network: an address and a prefix length (`10.0.0.0/8`, `::1/128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    addr: std::net::IpAddr,
    prefix: u8,
}

impl IpNet {
    /// Parses `a.b.c.d`, `a.b.c.d/n`, an IPv6 address, or one with `/n`.
    ///
    /// # Errors
    /// A text that is neither.
    pub fn parse(text: &str) -> Result<IpNet, String> {
        let text = text.trim();
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: std::net::IpAddr = addr
            .parse()
            .map_err(|_| format!("`{text}` is not an IP address or CIDR network"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{text}`: the prefix length must be 0 to {max}"))?,
        };
        Ok(IpNet { addr, prefix })
    }

    /// Whether `ip` lies in this network (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        use std::net::IpAddr;
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}
