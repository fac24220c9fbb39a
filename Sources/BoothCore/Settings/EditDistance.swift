/// Spelling suggestions for unknown keys, sections and choices.
public enum Spelling {
    /// Optimal string alignment distance (Levenshtein plus adjacent transposition), case-insensitive:
    /// `"debunce"` → `"debounce"` is 1, `"ture"` → `"true"` is 1.
    static func distance(_ a: String, _ b: String) -> Int {
        let s = Array(a.lowercased().unicodeScalars), t = Array(b.lowercased().unicodeScalars)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        var previous2 = [Int](repeating: 0, count: t.count + 1)
        var previous = Array(0...t.count)
        var current = [Int](repeating: 0, count: t.count + 1)
        for i in 1...s.count {
            current[0] = i
            for j in 1...t.count {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                var best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    best = min(best, previous2[j - 2] + 1)
                }
                current[j] = best
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[t.count]
    }

    /// The candidate closest to `word`, if it is close enough to be a likely typo:
    /// at most 2 edits, or a third of the longer word for long names. Ties go to the earlier candidate.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let d = distance(word, candidate)
            if let current = best, current.distance <= d { continue }
            best = (candidate, d)
        }
        guard let found = best else { return nil }
        let limit = max(2, max(word.count, found.candidate.count) / 3)
        return found.distance <= limit ? found.candidate : nil
    }
}
