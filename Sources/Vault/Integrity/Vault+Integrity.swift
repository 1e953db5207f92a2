import Foundation

extension Vault {
    /// The vault's generation: how many times it was written (0 for a format-1 vault,
    /// which does not count).
    public var generation: UInt64 { index.header.generation }

    /// Checks that `index` is the one its key last sealed (format 2: the index seal)
    /// and not older than this machine remembers (`options.generationMemory`), as
    /// `policy` allows. Returns the generation remembered, if any.
    ///
    /// Errors: `tampered` (the seal does not authenticate), `entry_rolled_back`,
    /// `entry_added`, `entry_removed` (naming the entry), `rolled_back`,
    /// `generation_memory_damaged`.
    static func checkIntegrity(_ index: VaultIndex, key: SecretBytes, file: String, options: VaultOptions,
                               policy: VaultRollbackPolicy) throws -> UInt64? {
        if policy != .accept, let seal = index.seal { try checkSeal(seal, of: index, key: key, file: file, policy: policy) }
        guard let memory = options.generationMemory else { return nil }
        let remembered: UInt64?
        do {
            remembered = try memory.remembered(vaultID: index.header.vaultID)
        } catch let error as VaultError where policy == .accept && error.code == .generationMemoryDamaged {
            remembered = nil
        }
        if let remembered, index.header.generation < remembered, policy != .accept {
            let found = index.header.sealsIndex ? "is at generation \(index.header.generation)" : "is in format 1 (written before generations were counted)"
            throw VaultError(.rolledBack, "the vault \(file) was rolled back: it \(found), but this machine has seen generation \(remembered) of it (remembered in \(memory.path(vaultID: index.header.vaultID))). An older copy of the whole vault was put in its place (a restored backup, a sync conflict, or someone reverting a rotated secret), so its values may be old. Put the newest copy back; or, if you restored this copy on purpose, accept it with 'hubscript vault reseal'")
        }
        return remembered
    }

    /// Compares the entries of `index` with the list its seal authenticates.
    private static func checkSeal(_ seal: IndexSeal, of index: VaultIndex, key: SecretBytes, file: String,
                                  policy: VaultRollbackPolicy) throws {
        let plain = try SecretBytes(count: 0, capacity: max(seal.sealed.count - Sodium.tagBytes, 1))
        guard Sodium.open(seal.sealed[...], ad: IndexSeal.associatedData(header: index.header), nonce: seal.nonce[...], key: key, into: plain) else {
            throw VaultError(.tampered, "the index seal of the vault \(file) failed authentication: its header or seal was altered outside hubscript. Restore the vault from a backup; or, if every entry is as you expect, accept it with 'hubscript vault reseal'")
        }
        guard let lines = plain.withUnsafeBytes({ IndexSeal.lines($0) }) else {
            throw VaultError(.corrupt, "the index seal of the vault \(file) authenticates but does not hold an entry list this build reads")
        }
        var sealed: [String: [UInt8]] = [:]
        for line in lines { sealed[line.name] = line.digest }
        let allowed: String? = if case .allowEntry(let name) = policy { name } else { nil }
        let tail = "or, if you restored it on purpose, accept the vault as it is with 'hubscript vault reseal'"
        // A record that does not authenticate at all (altered, renamed, from another
        // vault) is left to the entry's own check, which names it `tampered` when it is
        // read or kept by a write, and lets it be removed.
        var unauthenticated = false
        func authenticates(_ r: EntryRecord) throws -> Bool {
            let out = try SecretBytes(count: 0, capacity: max(r.sealed.count - Sodium.tagBytes, 1))
            let ok = Sodium.open(r.sealed[...], ad: r.associatedData(vaultID: index.header.vaultID, version: index.header.version),
                                 nonce: r.nonce[...], key: key, into: out)
            if !ok { unauthenticated = true }
            return ok
        }
        for r in index.records where r.name != allowed && sealed[r.name] != r.digest {
            guard try authenticates(r) else { continue }
            guard let digest = sealed[r.name] else {
                throw VaultError(.entryAdded, "entry '\(r.name)' in the vault \(file) is not in the vault's sealed index: it was put in outside hubscript (perhaps a removed entry brought back from an older copy of the vault). Remove it ('hubscript vault rm \(r.name)'), \(tail)", entry: r.name)
            }
            guard digest == r.digest else {
                throw VaultError(.entryRolledBack, "entry '\(r.name)' in the vault \(file) is not the copy the vault last sealed: an older copy of it was put in its place outside hubscript, so its value may be old (a rotated secret come back). Set it again ('hubscript vault set \(r.name)'), remove it ('hubscript vault rm \(r.name)'), \(tail)", entry: r.name)
            }
        }
        let present = Set(index.records.map(\.name))
        for line in lines where !unauthenticated && line.name != allowed && !present.contains(line.name) {
            throw VaultError(.entryRemoved, "entry '\(line.name)' is missing from the vault \(file): the vault's sealed index lists it, so it was taken out outside hubscript. Restore the vault from a backup, \(tail)", entry: line.name)
        }
    }

    /// The seal of `index` (whose header is final) under the current key.
    func makeSeal(_ index: VaultIndex) -> IndexSeal {
        let nonce = newNonce()
        let sealed = IndexSeal.list(index.records).withUnsafeBytes {
            Sodium.seal($0, ad: IndexSeal.associatedData(header: index.header), nonce: nonce, key: key)
        }
        return IndexSeal(nonce: nonce, sealed: sealed)
    }

    /// Records that this machine saw `generation` of this vault, when it is more than
    /// remembered. Best effort: a memory that cannot be written (a read-only state
    /// folder) leaves the vault usable, without whole-file rollback detection beyond
    /// what was remembered before.
    func rememberGeneration(_ generation: UInt64) {
        guard let memory = options.generationMemory, generation > 0, generation > (rememberedGeneration ?? 0) else { return }
        if (try? memory.remember(vaultID: index.header.vaultID, generation: generation, checkpoint: options.checkpoint)) != nil {
            rememberedGeneration = generation
        }
    }

    /// Re-seals `index` (records sealed in format 1) in the current format: every
    /// record is opened with its old associated data and sealed anew (same names,
    /// kinds and dates).
    func migrated(_ old: VaultIndex) throws -> VaultIndex {
        var header = old.header
        header.version = VaultHeader.currentVersion
        var next = VaultIndex(header: header, records: [])
        for r in old.records {
            let plain = try openRecord(r, header: old.header)
            next.records.append(plain.withUnsafeBytes {
                seal(r.kind, name: r.name, created: r.created, updated: r.updated, plaintext: $0, header: header)
            })
        }
        return next
    }

    /// Accepts the vault as it is now and seals its index at a generation above any
    /// this machine has seen: for a vault (or an entry) restored from a backup on
    /// purpose. Every entry must authenticate under the key. Returns the new generation.
    @discardableResult
    public func reseal() throws -> UInt64 {
        try locked {
            try reload()
            try authenticateAll(except: nil)
            try write(index)
            return index.header.generation
        }
    }
}
