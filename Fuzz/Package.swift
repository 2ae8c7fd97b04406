// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for every decoder and for the incremental decoders. A package of its own,
// so users of Magpie never build it. Build and run with `scripts/fuzz.sh TARGET SECONDS`.
let targets = ["FuzzJPEG", "FuzzPNG", "FuzzGIF", "FuzzWebP", "FuzzBMPICO", "FuzzIncremental"]

let package = Package(
    name: "MagpieFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Magpie", path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "MagpieImage", package: "Magpie")]),
    ] + targets.map { name in
        .executableTarget(
            name: name,
            dependencies: ["FuzzSupport", .product(name: "MagpieImage", package: "Magpie")])
    }
)
