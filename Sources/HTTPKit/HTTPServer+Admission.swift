import Foundation

/// Who gets a connection slot: the per-address cap, the total cap, and the room a
/// long-waiting connection of a busier address makes for a new client when the server
/// is full (``HTTPServerLimits``).
extension HTTPServer {
    /// What ``admission(for:)`` decided about a new connection.
    enum Admission: Equatable {
        case admit
        /// Admit, after evicting the connection with this identity.
        case admitEvicting(ObjectIdentifier)
        case refuse(HTTPRequestError)
    }

    /// Registers an accepted descriptor and starts its thread, or refuses it (429 past
    /// the per-address cap; 503 when full and no connection can make room; closed
    /// without an answer if ``stop()`` has begun).
    func admit(_ fd: Int32, peer: String) {
        Socket.configureConnection(fd, timeout: limits.idleTimeout)
        condition.lock()
        guard isRunningLocked else {
            condition.unlock()
            Socket.close(fd)
            return
        }
        let decision = admission(for: peer)
        if case .refuse(let error) = decision {
            condition.unlock()
            refuse(fd, with: error)
            return
        }
        if case .admitEvicting(let id) = decision, let victim = connections[id] {
            evict(victim)
        }
        let connection = HTTPConnection(fd: fd, peer: peer, server: self, limits: limits, handler: handler)
        connections[ObjectIdentifier(connection)] = connection
        slotsByAddress[peer, default: 0] += 1
        slotsInUse += 1
        condition.unlock()
        guard ConnectionThread.start({ connection.run() }) else {
            // No thread could be made (a thread or memory limit): answer busy, close.
            connection.refuseUnstarted()
            return
        }
    }

    /// Decides about a new connection from `peer` (call with the lock held).
    func admission(for peer: String) -> Admission {
        let mine = slotsByAddress[peer] ?? 0
        // A per-address cap as large as the whole is no cap: the total's 503 applies.
        let perAddress = limits.effectivePerAddress
        if perAddress < maxConnections, mine >= perAddress {
            return .refuse(.tooManyConnections(perAddress: perAddress))
        }
        guard slotsInUse >= maxConnections else { return .admit }
        // Full: a connection makes room if it has waited at least evictionAge for its
        // request (one busy with quick requests never has; one held open by a trickle
        // soon has) and its address holds more slots than the newcomer's. Of those, one
        // of the busiest address, the longest waiting.
        let now = ContinuousClock.now
        var victim: HTTPConnection?
        var victimLoad = mine
        for connection in connections.values where !connection.evicted {
            let load = slotsByAddress[connection.peer] ?? 0
            guard load > mine, let since = connection.waitingSince,
                  since.duration(to: now) >= .seconds(limits.evictionAge) else { continue }
            if load > victimLoad || (load == victimLoad && since < victim?.waitingSince ?? now) {
                victim = connection
                victimLoad = load
            }
        }
        guard let victim else { return .refuse(.serverBusy) }
        return .admitEvicting(ObjectIdentifier(victim))
    }

    /// Takes `connection`'s slot and wakes its thread, which answers 503 if part of a
    /// request had arrived and closes (call with the lock held: the descriptor is open).
    private func evict(_ connection: HTTPConnection) {
        connection.evicted = true
        release(slotOf: connection)
        Socket.shutdownRead(connection.fd)
    }

    /// Gives back `connection`'s slot (call with the lock held).
    private func release(slotOf connection: HTTPConnection) {
        slotsInUse -= 1
        let left = (slotsByAddress[connection.peer] ?? 1) - 1
        slotsByAddress[connection.peer] = left > 0 ? left : nil
    }

    /// Answers a connection the server will not serve, and closes it. The answer is a
    /// few hundred bytes into an empty send buffer: it does not block.
    func refuse(_ fd: Int32, with error: HTTPRequestError) {
        let bytes = HTTPResponseEncoder.encode(error.response, keepAlive: false, minorVersion: 1)
        _ = bytes.withUnsafeBytes { Socket.sendAll(fd, $0, within: 1) }
        Socket.shutdownWrite(fd)
        Socket.close(fd)
    }

    /// Marks `connection` about to run the handler: it can no longer be evicted.
    /// Returns false if it was evicted already (it must answer 503 and close).
    func connectionWillHandle(_ connection: HTTPConnection) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !connection.evicted else { return false }
        connection.waitingSince = nil
        return true
    }

    /// Whether `connection` was evicted to make room for another client.
    func wasEvicted(_ connection: HTTPConnection) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return connection.evicted
    }

    /// Deregisters `connection` and closes its descriptor. Both happen under the lock,
    /// so ``stop()`` never sees a connection that is gone but still holds a descriptor,
    /// and never shuts down a descriptor number that has been reused.
    func connectionEnded(_ connection: HTTPConnection) {
        condition.lock()
        if connections.removeValue(forKey: ObjectIdentifier(connection)) != nil, !connection.evicted {
            release(slotOf: connection)
        }
        Socket.close(connection.fd)
        condition.broadcast()
        condition.unlock()
    }
}
