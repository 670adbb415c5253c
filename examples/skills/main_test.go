package main

func Example() {
	main()
	// Output:
	// 2025-11-25
	//   git-flow: Branch, commit and merge the way this team does. (2 files)
	//   loaded skill://git-flow/SKILL.md: 249 bytes, verified true
	//   read references/commits.md: 121 bytes
	//   wrote [SKILL.md references/commits.md]
	// 2026-07-28
	//   git-flow: Branch, commit and merge the way this team does. (2 files)
	//   loaded skill://git-flow/SKILL.md: 249 bytes, verified true
	//   read references/commits.md: 121 bytes
	//   wrote [SKILL.md references/commits.md]
}
