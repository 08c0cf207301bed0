package config

import "strings"

// suggest returns the valid key nearest to k when it is close enough to be
// a likely typo: a different case, or a small edit distance (one edit for
// short keys, two for longer ones). Ties go to the earlier valid key.
func suggest(k string, valid []string) string {
	best, bestD := "", 0
	for _, v := range valid {
		if strings.EqualFold(k, v) {
			return v
		}
		limit := 1
		if len(v) >= 5 {
			limit = 2
		}
		d := distance(k, v)
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = v, d
		}
	}
	return best
}

// distance is the optimal-string-alignment edit distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Suggest returns the name in valid nearest to name when it is close
// enough to be a likely typo, "" otherwise: for a checker of names that
// are not keys (a registered type, say) to say "did you mean".
func Suggest(name string, valid []string) string { return suggest(name, valid) }
