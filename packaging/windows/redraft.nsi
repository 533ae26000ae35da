; Redraft's Windows installer (NSIS 3, Unicode). Built by packaging/windows/build on Linux, and by
; .github/workflows/windows.yml on a Windows runner; makensis is the same program on both.
;
;   makensis -DVERSION=0.1.0 -DPAYLOAD=<folder> -DGUI_EXE=<exe> [-DGUI_ARGS=<args>] -DOUTFILE=<setup.exe> [-DFAST] redraft.nsi
;
; PAYLOAD is copied whole into the install folder. GUI_EXE (relative to it) opens the editor without a
; console window: redraftw.exe for the PyInstaller build, python\pythonw.exe with GUI_ARGS "-m app.cli"
; for the embedded-Python build made on Linux. PAYLOAD\redraft.ico is the icon of shortcuts and files.
;
; Per user, no administrator rights: everything goes under %LOCALAPPDATA%\Programs\Redraft and HKCU.
; The folder goes on the writer's Path (packaging/windows/path.nsh) unless that component is unticked.
; Silent install: Setup.exe /S [/DESKTOP] [/D=folder]; silent removal: "Uninstall Redraft.exe" /S.
; Documents, settings and models the writer added (%APPDATA%\Redraft, %LOCALAPPDATA%\Redraft) are
; never touched by the uninstaller.

; 64-bit like everything it installs; also what Wine's 64-bit-only install (Debian's wine64) can run
Target amd64-unicode
ManifestDPIAware true
RequestExecutionLevel user
!ifdef FAST
  SetCompressor zlib  ; -DFAST: a quick build to try the script, three times the size
!else
  SetCompressor /SOLID lzma
  SetCompressorDictSize 64
!endif

!ifndef VERSION
  !error "pass -DVERSION=x.y.z"
!endif
!ifndef PAYLOAD
  !error "pass -DPAYLOAD=<folder of the built app>"
!endif
!ifndef GUI_EXE
  !define GUI_EXE "redraftw.exe"
!endif
!ifndef GUI_ARGS
  !define GUI_ARGS ""
!endif
!ifndef OUTFILE
  !define OUTFILE "Redraft-${VERSION}-windows-x86_64-setup.exe"
!endif

!define APP "Redraft"
!define PROGID "Redraft.Document"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP}"
!define UNINSTALLER "Uninstall ${APP}.exe"

!include "MUI2.nsh"
!include "FileFunc.nsh"
!include "LogicLib.nsh"
!include "path.nsh"

Name "${APP}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP}"
InstallDirRegKey HKCU "Software\${APP}" "InstallDir"
BrandingText "${APP} ${VERSION}"

VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${APP}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${APP} installer"
VIAddVersionKey "LegalCopyright" "Apache-2.0"

!define MUI_ICON "${PAYLOAD}\redraft.ico"
!define MUI_UNICON "${PAYLOAD}\redraft.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\${GUI_EXE}"
!define MUI_FINISHPAGE_RUN_PARAMETERS "${GUI_ARGS}"
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Section "Redraft (required)" SecApp
  SectionIn RO
  ; an update replaces the program files wholesale: no stale modules from an older torch
  RMDir /r "$INSTDIR\_internal"
  RMDir /r "$INSTDIR\lib"
  RMDir /r "$INSTDIR\python"
  SetOutPath "$INSTDIR"
  File /r "${PAYLOAD}\*.*"
  WriteUninstaller "$INSTDIR\${UNINSTALLER}"

  CreateDirectory "$SMPROGRAMS\${APP}"
  CreateShortCut "$SMPROGRAMS\${APP}\${APP}.lnk" "$INSTDIR\${GUI_EXE}" "${GUI_ARGS}" "$INSTDIR\redraft.ico"
  CreateShortCut "$SMPROGRAMS\${APP}\Uninstall ${APP}.lnk" "$INSTDIR\${UNINSTALLER}"

  ; Open with Redraft for .txt and .md: listed among the file's programs, never taking the default away
  WriteRegStr HKCU "Software\Classes\${PROGID}" "" "Text document (Redraft)"
  WriteRegStr HKCU "Software\Classes\${PROGID}\DefaultIcon" "" "$INSTDIR\redraft.ico"
  WriteRegStr HKCU "Software\Classes\${PROGID}\shell\open\command" "" '"$INSTDIR\${GUI_EXE}" ${GUI_ARGS} "%1"'
  WriteRegStr HKCU "Software\Classes\.txt\OpenWithProgids" "${PROGID}" ""
  WriteRegStr HKCU "Software\Classes\.md\OpenWithProgids" "${PROGID}" ""
  WriteRegStr HKCU "Software\Classes\.markdown\OpenWithProgids" "${PROGID}" ""
  System::Call 'shell32::SHChangeNotify(i 0x08000000, i 0, p 0, p 0)'  ; SHCNE_ASSOCCHANGED

  ; Settings > Apps lists it, with its size, and removes it from there
  WriteRegStr HKCU "Software\${APP}" "InstallDir" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${APP}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\redraft.ico"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\${UNINSTALLER}"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\${UNINSTALLER}" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $0
SectionEnd

Section "redraft in any console (Path)" SecPath
  Call RedraftAddToPath
SectionEnd

Section /o "Desktop shortcut" SecDesktop
  CreateShortCut "$DESKTOP\${APP}.lnk" "$INSTDIR\${GUI_EXE}" "${GUI_ARGS}" "$INSTDIR\redraft.ico"
SectionEnd

LangString DESC_App ${LANG_ENGLISH} "The editor, the built-in model and the CPU build of PyTorch."
LangString DESC_Path ${LANG_ENGLISH} "Adds the program folder to your Path, so that redraft runs in a new console."
LangString DESC_Desktop ${LANG_ENGLISH} "A Redraft icon on the desktop."
!insertmacro MUI_FUNCTION_DESCRIPTION_BEGIN
  !insertmacro MUI_DESCRIPTION_TEXT ${SecApp} $(DESC_App)
  !insertmacro MUI_DESCRIPTION_TEXT ${SecPath} $(DESC_Path)
  !insertmacro MUI_DESCRIPTION_TEXT ${SecDesktop} $(DESC_Desktop)
!insertmacro MUI_FUNCTION_DESCRIPTION_END

Function .onInit
  ; /DESKTOP on the command line ticks the desktop shortcut (silent installs have no components page)
  ${GetParameters} $0
  ClearErrors
  ${GetOptions} $0 "/DESKTOP" $1
  ${IfNot} ${Errors}
    SectionSetFlags ${SecDesktop} ${SF_SELECTED}
  ${EndIf}
FunctionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\${APP}\${APP}.lnk"
  Delete "$SMPROGRAMS\${APP}\Uninstall ${APP}.lnk"
  RMDir "$SMPROGRAMS\${APP}"
  Delete "$DESKTOP\${APP}.lnk"

  DeleteRegValue HKCU "Software\Classes\.txt\OpenWithProgids" "${PROGID}"
  DeleteRegValue HKCU "Software\Classes\.md\OpenWithProgids" "${PROGID}"
  DeleteRegValue HKCU "Software\Classes\.markdown\OpenWithProgids" "${PROGID}"
  DeleteRegKey HKCU "Software\Classes\${PROGID}"
  System::Call 'shell32::SHChangeNotify(i 0x08000000, i 0, p 0, p 0)'
  Call un.RedraftRemoveFromPath  ; reads HKCU\Software\${APP}, deleted next
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  DeleteRegKey HKCU "Software\${APP}"

  ; only what the installer put there (the folder may have been chosen by hand, with other files in
  ; it); the writer's own files live elsewhere (see the top of this file)
  RMDir /r "$INSTDIR\_internal"
  RMDir /r "$INSTDIR\lib"
  RMDir /r "$INSTDIR\python"
  Delete "$INSTDIR\redraft.exe"
  Delete "$INSTDIR\redraftw.exe"
  Delete "$INSTDIR\redraft.cmd"
  Delete "$INSTDIR\redraft.ico"
  Delete "$INSTDIR\${UNINSTALLER}"
  RMDir "$INSTDIR"
SectionEnd
