import Foundation

extension Vault {
    // MARK: Reading

    /// Every entry, sorted by name, after authenticating each (so the names and dates
    /// shown are the ones sealed). Never a value.
    public func list() throws -> [VaultEntry] {
        try index.records.sorted { $0.name < $1.name }.map { r in
            let plain = try openRecord(r)
            let object = r.kind == .object ? ObjectKeyRecord(plain).info(name: r.name) : nil
            return VaultEntry(name: r.name, kind: r.kind == .secret ? .secret : .object,
                              created: Date(timeIntervalSince1970: TimeInterval(r.created)),
                              updated: Date(timeIntervalSince1970: TimeInterval(r.updated)), object: object)
        }
    }

    /// The value of the secret `name`, in locked memory. Errors: `not_found`,
    /// `tampered` (naming the entry).
    public func secret(named name: String) throws -> SecretBytes {
        guard let r = index.records.first(where: { $0.name == name }) else {
            throw VaultError(.notFound, "no secret '\(name)' in the vault \(folder.path)", entry: name)
        }
        guard r.kind == .secret else {
            throw VaultError(.notFound, "'\(name)' is an object, not a secret (hubscript vault get-object \(name))", entry: name)
        }
        return try openRecord(r)
    }

    /// Authenticates the entries named (all if `names` is empty) and, for every object
    /// among them, checks that its file is there and hashes to its id. Returns how
    /// many secrets and objects were checked.
    public func verify(_ names: [String] = []) throws -> (secrets: Int, objects: Int) {
        var records = index.records
        if !names.isEmpty {
            records = try names.map { name in
                guard let r = index.records.first(where: { $0.name == name }) else {
                    throw VaultError(.notFound, "no entry '\(name)' in the vault \(folder.path)", entry: name)
                }
                return r
            }
        }
        var counts = (secrets: 0, objects: 0)
        for r in records {
            let plain = try openRecord(r)
            guard r.kind == .object else { counts.secrets += 1; continue }
            try checkObjectFile(ObjectKeyRecord(plain), name: r.name)
            counts.objects += 1
        }
        return counts
    }

    // MARK: Changing

    /// Stores `value` as the secret `name` (replacing its value if it exists).
    /// Errors: `invalid_name`, `invalid_value` (empty or over 1 MiB), `tampered` (an
    /// entry kept is altered: nothing is written), `locked`, `wrong_key`.
    @discardableResult
    public func setSecret(_ name: String, value: SecretBytes) throws -> VaultSetOutcome {
        try VaultName.validate(name)
        guard value.count > 0 else { throw VaultError(.invalidValue, "the value of '\(name)' is empty: nothing to store", entry: name) }
        guard value.count <= VaultLimits.maxSecretBytes else {
            throw VaultError(.invalidValue, "the value of '\(name)' is over 1 MiB: store it as an object (hubscript vault put-object)", entry: name)
        }
        return try locked {
            try reload()
            let existing = index.records.firstIndex { $0.name == name }
            if let k = existing, index.records[k].kind != .secret {
                throw VaultError(.invalidName, "'\(name)' is an object in the vault: remove it first or choose another name", entry: name)
            }
            try authenticateAll(except: name)
            let created = existing.map { index.records[$0].created } ?? now
            let record = value.withUnsafeBytes { seal(.secret, name: name, created: created, plaintext: $0) }
            var next = index
            if let k = existing { next.records[k] = record } else { next.records.append(record) }
            try write(next)
            return existing == nil ? .created : .replaced
        }
    }

    /// Removes the entry `name` (a secret, or an object by name or id, whose file is
    /// then deleted). An entry that fails authentication can be removed; every other
    /// entry must authenticate. Returns what was removed.
    @discardableResult
    public func remove(_ name: String) throws -> VaultEntry.Kind {
        var objectID: String?
        let kind: VaultEntry.Kind = try locked {
            try reload()
            guard let k = try index.records.firstIndex(where: { $0.name == name }) ?? objectRecordIndex(id: name) else {
                throw VaultError(.notFound, "no entry '\(name)' in the vault \(folder.path)", entry: name)
            }
            let record = index.records[k]
            try authenticateAll(except: record.name)
            if record.kind == .object, let plain = try? openRecord(record) {
                objectID = ObjectKeyRecord(plain).id
            }
            var next = index
            next.records.remove(at: k)
            try write(next)
            return record.kind == .secret ? .secret : .object
        }
        if let objectID { removeObjectFile(objectID) }
        return kind
    }

    /// Re-seals every entry (secrets, and the keys of objects, whose files are not
    /// rewritten) under the key `newSource` gives; afterwards only that key opens the
    /// vault. Every entry must authenticate first. Returns how many were re-sealed.
    @discardableResult
    public func rotateKey(to newSource: VaultKeySource, kdf: VaultKDF = .moderate) throws -> Int {
        try locked {
            try reload()
            let plaintexts = try index.records.map { try openRecord($0) }
            let made = try Self.newHeader(newSource, kdf: kdf, vaultID: index.header.vaultID, random: options.random)
            if case .raw = made.header.keyKind, index.header.keyKind == .raw, made.key.constantTimeEquals(key) {
                throw VaultError(.badKey, "the new key is the vault's current key: nothing to rotate")
            }
            var next = VaultIndex(header: made.header, records: [])
            let oldKey = key
            key = made.key
            for (r, plain) in zip(index.records, plaintexts) {
                next.records.append(plain.withUnsafeBytes { seal(r.kind, name: r.name, created: r.created, updated: r.updated, plaintext: $0, header: made.header) })
            }
            do {
                try write(next)
            } catch {
                key = oldKey
                throw error
            }
            return next.records.count
        }
    }

    // MARK: Sealing

    /// The plaintext of `r` (sealed under `header`, by default the vault's), or
    /// `tampered` naming it.
    func openRecord(_ r: EntryRecord, header: VaultHeader? = nil) throws -> SecretBytes {
        let header = header ?? index.header
        let out = try SecretBytes(count: 0, capacity: max(r.sealed.count - Sodium.tagBytes, 1))
        guard Sodium.open(r.sealed[...], ad: r.associatedData(vaultID: header.vaultID, version: header.version),
                          nonce: r.nonce[...], key: key, into: out),
              r.kind == .secret || out.count == ObjectKeyRecord.size
        else {
            throw VaultError(.tampered, "entry '\(r.name)' in the vault \(indexPath) failed authentication: it was altered, moved or renamed (restore the vault from a backup, or remove the entry)", entry: r.name)
        }
        return out
    }

    /// The position of the object entry whose id is `id`, if `id` is an object id.
    func objectRecordIndex(id: String) throws -> Int? {
        guard VaultName.isObjectID(id) else { return nil }
        return try index.records.firstIndex { r in
            guard r.kind == .object else { return false }
            return ObjectKeyRecord(try openRecord(r)).id == id
        }
    }

    /// Authenticates every entry but `name`; the first that fails is named.
    func authenticateAll(except name: String?) throws {
        for r in index.records where r.name != name { _ = try openRecord(r) }
    }

    /// A new record sealing `plaintext` with a fresh nonce (`updated` defaults to now).
    func seal(_ kind: EntryRecord.Kind, name: String, created: Int64, updated: Int64? = nil,
              plaintext: UnsafeRawBufferPointer, header: VaultHeader? = nil) -> EntryRecord {
        let header = header ?? index.header
        var r = EntryRecord(kind: kind, name: name, created: created, updated: updated ?? now, nonce: newNonce(), sealed: [])
        r.sealed = Sodium.seal(plaintext, ad: r.associatedData(vaultID: header.vaultID, version: header.version), nonce: r.nonce, key: key)
        return r
    }
}
